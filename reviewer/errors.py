"""One root exception; subclasses carry the file, line and field a user needs to fix the input."""

from __future__ import annotations

from pathlib import Path


class ReviewerError(Exception):
    """Root of every error the tool reports to a user (CLI or GUI show the message, not a traceback)."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = []
        if self.path:
            where.append(self.path)
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.field:
            where.append(f"field '{self.field}'")
        return f"{': '.join([', '.join(where), self.message]) if where else self.message}"


class RecordError(ReviewerError):
    """Raised when a raster file of the record cannot be used (unreadable, wrong product, missing layer)."""


class UnreadableFileError(RecordError, OSError):
    """Raised when a raster cannot be opened or read (truncated, corrupt, not a raster)."""


class NotGeoreferencedError(RecordError, ValueError):
    """Raised when a raster carries no CRS or geotransform, so it cannot be placed on the site grid."""


class MissingLayerError(RecordError, FileNotFoundError):
    """Raised when a band or its quality layer is absent from a scene."""


class WrongProductError(RecordError, ValueError):
    """Raised for a file that is not the product it claims (Level-1, already scaled, legacy collection)."""


class NoSceneError(RecordError, LookupError):
    """Raised when no scene matches a requested date, year or filter."""


class MemoryBudgetError(RecordError):
    """Raised before a read that would not fit in the memory free (a whole tile at full resolution)."""


class SiteError(ReviewerError, ValueError):
    """Raised when a site folder or its site.json is not usable."""


class SchemaError(ReviewerError, ValueError):
    """Raised when a JSON document or JSON line fails its schema (carries file, line and field)."""


class BankError(ReviewerError, ValueError):
    """Raised when a bank folder is inconsistent (hashes, cross references, duplicate ids)."""


class StoreError(ReviewerError):
    """Raised when the review store cannot be opened or migrated."""


class ScoringError(ReviewerError, ValueError):
    """Raised when a scoring run cannot go ahead (bad bank, bad run lines without --lenient)."""


class DraftingError(ReviewerError):
    """Raised when an AI draft cannot be obtained (no key, API unavailable, refusal)."""


class OutputError(ReviewerError, OSError):
    """Raised when an output cannot be written where asked (a file where a folder is expected, a read-only
    place, a full disk); nothing half-written is left behind."""


class Cancelled(ReviewerError):
    """Raised inside a worker when the user cancelled the job."""


class ReviewError(ReviewerError, ValueError):
    """Raised when a review action breaks a rule (role, assignment, blinding, state, version, frozen bank).

    The message names the item and the rule; nothing was written.
    """
