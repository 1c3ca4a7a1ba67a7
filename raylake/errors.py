"""User-facing errors.

Every mistake a user can make (a missing lake, an index of another version, an empty
question, ...) raises a :class:`RaylakeError`. The CLI prints its message on one line and
exits with its ``exit_code``; anything else is a bug and keeps its traceback.
"""
from __future__ import annotations


# Exit codes of every command. Partial success (files skipped by `index`, lines of an `ask
# --questions` batch that got an error line) gets its own code: 1 is also what an uncaught
# Python exception exits with, so a script that tolerates a partial result must not thereby
# tolerate a crash.
EXIT_OK, EXIT_USAGE, EXIT_PARTIAL, EXIT_INTERRUPTED = 0, 2, 3, 130


class RaylakeError(Exception):
    """An error caused by the user's input or environment, with an actionable message."""

    exit_code = 2

    def __init__(self, message: str, *, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class LakeError(RaylakeError):
    """The lake path is missing, empty or unreadable."""


class IndexMissingError(RaylakeError):
    """No index where one was expected."""


class IndexVersionError(RaylakeError):
    """The index was written by an incompatible format version."""


class IntentError(RaylakeError):
    """An intent graph does not follow the Appendix A schema."""


class LLMError(RaylakeError):
    """The LLM endpoint is down, slow, or answered something unusable."""


class FusionError(RaylakeError):
    """A plan could not be executed into a table."""


class SkipFile(Exception):
    """Raised while reading one lake file: the file is skipped, with this one-line reason."""
