"""The lake: which files it holds (:mod:`.files`), how one is read into Arrow (:mod:`.read`) and what its
path says about it (:mod:`.names`)."""
from raylake.lake.files import Lake, LakeFile, open_lake
from raylake.lake.names import name_words
from raylake.lake.read import read_table

__all__ = ["Lake", "LakeFile", "name_words", "open_lake", "read_table"]
