"""Ray job: generate self-supervised trajectories (GRAFT Alg. 1) from an index.

    ray job submit --working-dir . -- python jobs/trajectories.py INDEX_DIR --out OUT --count 1000000
"""
import sys

from raylake.cli import main

if __name__ == "__main__":
    sys.exit(main(["trajectories", *sys.argv[1:]]))
