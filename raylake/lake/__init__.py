"""The lake: which files it holds (:mod:`.files`) and how one is read into Arrow (:mod:`.read`)."""
from raylake.lake.files import Lake, LakeFile, open_lake
from raylake.lake.read import read_table

__all__ = ["Lake", "LakeFile", "open_lake", "read_table"]
