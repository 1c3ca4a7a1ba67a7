

def missing_path(prog: str, **paths: str) -> int:
    """Print a one-line error for the first of ``paths`` (option name → path) that does not exist
    and return exit status 2, else 0: a benchmark's command-line check before it loads anything."""
    import os
    import sys

    for what, path in paths.items():
        if not os.path.exists(path):
            print(f"{prog}: error: {what.replace('_', '-')} {path!r} does not exist", file=sys.stderr)
            return 2
    return 0
