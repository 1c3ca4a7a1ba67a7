"""Ray job: train the learned relevance model on an index (questions with known tables and/or pseudo-questions).

    ray job submit --working-dir . -- python jobs/train_relevance.py --index-dir IDX --questions Q.jsonl --out MODEL [--pseudo N]
"""
import sys

from raylake.cli import main

if __name__ == "__main__":
    sys.exit(main(["relevance", "train", *sys.argv[1:]]))
