"""A file's preview: the few lines the planner and the Python steps are shown of the user's file (its kind, its
columns with their types, how many rows, the missing values, the first rows), within config.FILE_PREVIEW_CHARS.

Tables are read by pandas (Parquet through pyarrow, Excel through openpyxl, where installed), each in bounded
memory: a CSV or JSON Lines file of any size is counted in chunks (``read_csv(chunksize=...)``) and its first rows
come from its head; a Parquet file's counts come from its metadata, or from its row batches. pandas is imported
only when a table is previewed. A file that does not read as what its name says is previewed by its first lines,
saying so; a binary file by its size.
"""

from __future__ import annotations

import codecs
import io
import json
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

from hierplan.config import (FILE_PREVIEW_CHARS, FILE_PREVIEW_CHUNK_CELLS, FILE_PREVIEW_LINE_CHARS, FILE_PREVIEW_ROWS,
                             JSON_PREVIEW_DEPTH, JSON_PREVIEW_KEYS, JSON_PREVIEW_MAX_BYTES)

HEAD_BYTES = 64 * 1024  # what is read to tell text from binary and to show a text's first lines
TEXT, INT, FLOAT, BOOL, DATE, EMPTY = "text", "int", "float", "bool", "datetime", "empty"
COLUMNS_CHARS = FILE_PREVIEW_CHARS // 2  # the columns' line of a wide table leaves room for its rows
MISSING_CHARS = FILE_PREVIEW_CHARS // 5
PARQUET = (".parquet", ".pq")
EXCEL = (".xlsx", ".xlsm")
JSON_LINES = (".jsonl", ".ndjson")


def preview(name: str, data: bytes) -> str:
    """The preview of a file given as bytes (a prompt's worked example, a small file)."""
    return preview_file(name, io.BytesIO(data), len(data))


def preview_path(name: str, path: str) -> str:
    """The preview of a file on disk (the store's copy), read in bounded memory whatever its size."""
    return preview_file(name, path, os.path.getsize(path))


def preview_file(name: str, source: str | BinaryIO, size: int) -> str:
    lower = name.lower()
    head = _head(source)
    try:
        if lower.endswith(PARQUET):
            out = _parquet(source, size)
        elif lower.endswith(EXCEL):
            out = _excel(source, size)
        elif _text(head) is None:
            out = f"binary, {size:,} bytes"
        elif lower.endswith((".csv", ".tsv")):
            out = _csv(source, head, "\t" if lower.endswith(".tsv") else ",")
        elif lower.endswith(JSON_LINES):
            out = _json_lines(source, head)
        elif lower.endswith(".json"):
            out = _json(source, head, size)
        else:
            out = _plain_text(source, head)
    except ImportError as exc:  # an optional reader (pyarrow, openpyxl) is not installed
        out = f"{_kind(lower)}, {size:,} bytes (no preview: {exc.name} is not installed; pip install 'hierplan[files]')"
    except Exception as exc:  # noqa: BLE001 - a file that does not read as its name says is still the user's file
        reason = " ".join(str(exc).split())[:160] or type(exc).__name__
        out = f"{_kind(lower)} that pandas could not read ({reason}); "
        out += _plain_text(source, head) if _text(head) is not None else f"binary, {size:,} bytes"
    return cut(out)


def cut(text: str, limit: int = FILE_PREVIEW_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind(lower: str) -> str:
    for ends, kind in ((PARQUET, "Parquet"), (EXCEL, "Excel workbook"), ((".csv",), "CSV"), ((".tsv",), "TSV"),
                       (JSON_LINES, "JSON Lines"), ((".json",), "JSON")):
        if lower.endswith(ends):
            return kind
    return "file"


@contextmanager
def _open(source: str | BinaryIO) -> Iterator[BinaryIO]:
    """The file to read from its start: a path opened (and closed), or a caller's buffer rewound (left open)."""
    if isinstance(source, str):
        with open(source, "rb") as f:
            yield f
    else:
        source.seek(0)
        yield source


def _head(source: str | BinaryIO) -> bytes:
    with _open(source) as f:
        return f.read(HEAD_BYTES)


def _text(head: bytes) -> str | None:
    """The head as text, or None for a binary file (a NUL byte, or not UTF-8; a character cut at the head's end
    is no reason)."""
    if b"\0" in head[:4096]:
        return None
    try:
        return codecs.getincrementaldecoder("utf-8-sig")().decode(head, final=False)
    except UnicodeDecodeError:
        return None


def _first_lines(head: bytes, n: int) -> list[str]:
    text = _text(head) or ""
    lines = text.splitlines()
    if len(head) == HEAD_BYTES and not text.endswith(("\n", "\r")):
        lines = lines[:-1] or lines  # the last one is cut off by the head
    return [_line(line) for line in lines[:n]]


def _line(line: str) -> str:
    return line if len(line) <= FILE_PREVIEW_LINE_CHARS else line[: FILE_PREVIEW_LINE_CHARS - 1] + "…"


def _count_lines(source: str | BinaryIO) -> int:
    lines, last = 0, b"\n"
    with _open(source) as f:
        while chunk := f.read(1024 * 1024):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")


def _plain_text(source: str | BinaryIO, head: bytes) -> str:
    lines = _first_lines(head, FILE_PREVIEW_ROWS)
    return f"text, {_count_lines(source):,} lines; first lines:\n" + "\n".join(lines)


# --- tables -------------------------------------------------------------------------------------------------------

class Tally:
    """A table's summary, added up chunk by chunk: rows, each column's kind and missing values."""

    def __init__(self) -> None:
        self.rows = 0
        self.columns: list[str] = []
        self.kinds: dict[str, set[str]] = {}
        self.missing: dict[str, int] = {}

    def add(self, frame: Any) -> None:
        """One chunk (a pandas DataFrame)."""
        if not self.columns:
            self.columns = [str(c) for c in frame.columns]
        self.rows += len(frame)
        counts = frame.isna().sum()
        for column, name in zip(frame.columns, self.columns):
            missing = int(counts[column])
            self.missing[name] = self.missing.get(name, 0) + missing
            if missing < len(frame):  # a chunk with no value in a column says nothing of its type
                self.kinds.setdefault(name, set()).add(_dtype_kind(frame[column].dtype))

    def kind(self, name: str) -> str:
        kinds = self.kinds.get(name) or set()
        if not kinds:
            return EMPTY
        if len(kinds) == 1:
            return next(iter(kinds))
        return FLOAT if kinds <= {INT, FLOAT} else TEXT

    def text(self, label: str, first: list[str], extra: str = "") -> str:
        columns = ", ".join(f"{c} ({self.kind(c)})" for c in self.columns)
        missing = ", ".join(f"{c} {n:,}" for c, n in self.missing.items() if n)
        out = f"{label}, {self.rows:,} rows; columns: {cut(columns, COLUMNS_CHARS)}{extra}"
        if missing:
            out += f"\nmissing values: {cut(missing, MISSING_CHARS)}"
        return out + "\nfirst rows:\n" + "\n".join(first)


def _dtype_kind(dtype: Any) -> str:
    kind = getattr(dtype, "kind", "O")
    return {"i": INT, "u": INT, "f": FLOAT, "b": BOOL, "M": DATE}.get(kind, TEXT)


def _chunk_rows(columns: int) -> int:
    return max(1000, FILE_PREVIEW_CHUNK_CELLS // max(1, columns))


def _csv(source: str | BinaryIO, head: bytes, sep: str) -> str:
    import pandas as pd

    options = dict(sep=sep, encoding="utf-8-sig", encoding_errors="replace", skip_blank_lines=True)
    with _open(source) as f:
        header = pd.read_csv(f, nrows=0, **options).columns
    tally = Tally()
    with _open(source) as f:
        for chunk in pd.read_csv(f, chunksize=_chunk_rows(len(header)), low_memory=False, **options):
            tally.add(chunk)
    if not tally.columns:
        tally.columns = [str(c) for c in header]
    label = "TSV" if sep == "\t" else "CSV"
    return tally.text(label, _first_lines(head, FILE_PREVIEW_ROWS + 1))


def _json_lines(source: str | BinaryIO, head: bytes) -> str:
    import pandas as pd

    tally = Tally()
    with _open(source) as f:
        for chunk in pd.read_json(f, lines=True, chunksize=_chunk_rows(20)):
            tally.add(chunk)
    return tally.text("JSON Lines", _first_lines(head, FILE_PREVIEW_ROWS))


def _json(source: str | BinaryIO, head: bytes, size: int) -> str:
    if size > JSON_PREVIEW_MAX_BYTES:  # parsed whole, a document takes many times its size in memory
        return (f"JSON, {size:,} bytes (too large to parse for a preview); first lines:\n"
                + "\n".join(_first_lines(head, FILE_PREVIEW_ROWS)))
    with _open(source) as f:
        try:
            doc = json.loads(f.read().decode("utf-8-sig"))
        except ValueError as exc:
            return f"JSON that does not parse ({exc})"
    out = "JSON, " + _shape(doc, depth=0)
    records = _records(doc)
    if records is not None:
        import pandas as pd

        tally = Tally()
        tally.add(pd.DataFrame.from_records(records))
        first = [_line(json.dumps(r, ensure_ascii=False)) for r in records[:FILE_PREVIEW_ROWS]]
        out += "\n" + tally.text("as a table", first)
    return out


def _records(doc: Any) -> list[dict] | None:
    """A JSON table: a list of objects (or an object holding one such list)."""
    if isinstance(doc, dict):
        lists = [v for v in doc.values() if isinstance(v, list)]
        doc = lists[0] if len(lists) == 1 else None
    if isinstance(doc, list) and doc and all(isinstance(r, dict) for r in doc):
        return doc
    return None


def _shape(value: Any, depth: int) -> str:
    if isinstance(value, dict):
        # nested keys too: a list of records is the usual JSON table, and a program needs its field names
        if depth >= JSON_PREVIEW_DEPTH:
            return f"object of {len(value)} keys"
        inner = ", ".join(f"{k!r}: {_shape(v, depth + 1)}" for k, v in list(value.items())[:JSON_PREVIEW_KEYS])
        more = ', …' if len(value) > JSON_PREVIEW_KEYS else ''
        return f"object of {len(value)} keys {{{inner}{more}}}"
    if isinstance(value, list):
        first = f" of {_shape(value[0], depth + 1)}" if value else ""
        return f"list of {len(value):,} items{first}"
    return type(value).__name__ if value is not None else "null"


def _parquet(source: str | BinaryIO, size: int) -> str:
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(source)
    meta = pf.metadata
    names = pf.schema_arrow.names
    tally = Tally()
    tally.columns = list(names)
    tally.rows = meta.num_rows
    tally.kinds = {n: {_arrow_kind(pf.schema_arrow.field(n).type)} for n in names}
    counted = _parquet_nulls(meta, len(names))
    if counted is None:  # no statistics: count from the row batches, one at a time
        counted = [0] * len(names)
        for batch in pf.iter_batches(batch_size=_chunk_rows(len(names))):
            for i in range(len(names)):
                counted[i] += batch.column(i).null_count
    tally.missing = dict(zip(names, counted))
    for n, missing in tally.missing.items():
        if missing == tally.rows:
            tally.kinds[n] = set()
    first_batch = next(pf.iter_batches(batch_size=FILE_PREVIEW_ROWS), None)
    first = _frame_lines(first_batch.to_pandas()) if first_batch is not None else []
    return tally.text("Parquet", first)


def _parquet_nulls(meta: Any, columns: int) -> list[int] | None:
    counts = [0] * columns
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for i in range(columns):
            stats = group.column(i).statistics
            if stats is None or not stats.has_null_count:
                return None
            counts[i] += stats.null_count
    return counts


def _arrow_kind(arrow_type: Any) -> str:
    import pyarrow.types as t

    for test, kind in ((t.is_boolean, BOOL), (t.is_integer, INT), (t.is_floating, FLOAT), (t.is_decimal, FLOAT),
                       (t.is_temporal, DATE)):
        if test(arrow_type):
            return kind
    return TEXT


def _excel(source: str | BinaryIO, size: int) -> str:
    """The first sheet, row by row through openpyxl's read-only reader (bounded memory); the first rows as pandas
    reads them. Other sheets are named."""
    import openpyxl
    import pandas as pd

    with _open(source) as f:
        book = openpyxl.load_workbook(f, read_only=True, data_only=True)
        try:
            sheets = book.sheetnames
            rows = book[sheets[0]].iter_rows(values_only=True)
            header = [str(c) if c is not None else f"Unnamed: {i}" for i, c in enumerate(next(rows, ()) or ())]
            tally = Tally()
            tally.columns = header
            for chunk in _batches(rows, _chunk_rows(len(header))):
                tally.add(pd.DataFrame.from_records(chunk, columns=header, coerce_float=True))
        finally:
            book.close()
    with _open(source) as f:
        first_frame = pd.read_excel(f, sheet_name=0, nrows=FILE_PREVIEW_ROWS)
    extra = f" (sheet {sheets[0]!r}; other sheets: {', '.join(sheets[1:])})" if len(sheets) > 1 else ""
    return tally.text("Excel workbook", _frame_lines(first_frame), extra)


def _batches(rows: Iterable[tuple], n: int) -> Iterable[list[tuple]]:
    batch: list[tuple] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= n:
            yield batch
            batch = []
    if batch:
        yield batch


def _frame_lines(frame: Any) -> list[str]:
    """A few rows as CSV lines, header first (as a program reading the file with pandas would name them)."""
    return [_line(line) for line in frame.to_csv(index=False).splitlines()]
