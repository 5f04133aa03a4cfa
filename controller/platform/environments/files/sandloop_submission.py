"""Installed in every environment image: lets a submission's own modules be imported.

A submission arrives as ``/work/in/submission.zip`` (its .py files at their paths in the
submission's folder). This finder sits LAST on ``sys.meta_path``: the standard library and
installed packages always win, and only a module nothing else provides comes from the
archive (``utils.pdf``, ``custom_parsers.base_parser``). Python's zipimport reads the
archive in place: nothing is extracted. The archive is looked for at the first import that
needs it, so a warm container started before the inputs arrived finds it too.
"""

import os
import sys
import zipimport

ARCHIVE = "/work/in/submission.zip"


class SubmissionFinder:
    """A meta path finder for top-level names in the submission's archive."""

    importer = None

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        """Top-level modules only; submodules resolve through their package's zip path."""
        if path is not None:
            return None
        if cls.importer is None:
            if not os.path.isfile(ARCHIVE):
                return None
            cls.importer = zipimport.zipimporter(ARCHIVE)
        return cls.importer.find_spec(fullname)

    @classmethod
    def invalidate_caches(cls):
        """Nothing cached beyond the importer itself."""


sys.meta_path.append(SubmissionFinder)
