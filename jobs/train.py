"""Ray job: train the value network with IQL on Ray Train.

    ray job submit --working-dir . -- python jobs/train.py TRAJ_DIR --model-dir MODEL --workers 4 [--gpu]
"""
import sys

from raylake.cli import main

if __name__ == "__main__":
    sys.exit(main(["train", *sys.argv[1:]]))
