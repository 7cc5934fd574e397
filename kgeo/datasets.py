"""Loaders for the text corpora of the kgeo experiments.

Every ``load_*`` function takes a path to a copy already on disk (an archive as
distributed, or its extracted folder) and never touches the network. The two
``fetch_*`` functions download the canonical public archive into a cache folder
first, verify its SHA-256 checksum (by default for 20 Newsgroups; for WebKB when
you pass one: kgeo ships none), then call the matching loader.

- :func:`load_20newsgroups`: 20 Newsgroups, "bydate" split (J. Rennie);
- :func:`load_webkb`: CMU WebKB "4 universities" pages;
- :func:`load_reuters21578`: Reuters-21578 Distribution 1.0, ModApte split
  (and its R90 and R8 subsets);
- :func:`load_smart`: the ADI, CISI, CRAN and MED retrieval test collections.

All files are decoded as Latin-1, which maps every byte to one character, so
messages holding stray non-UTF-8 bytes load unchanged.
"""

import bz2
import collections
import gzip
import hashlib
import http.client
import logging
import lzma
import numbers
import os
import posixpath
import re
import reprlib
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ._validation import _callers_stacklevel, check_ordered as _check_ordered, is_data_frame

__all__ = [
    "DatasetNotFoundError",
    "IRCollection",
    "IncompleteCorpusWarning",
    "NewsgroupsCorpus",
    "ReutersCorpus",
    "TextCorpus",
    "WebKBCorpus",
    "fetch_20newsgroups",
    "fetch_webkb",
    "get_data_home",
    "load_20newsgroups",
    "load_reuters21578",
    "load_smart",
    "load_webkb",
    "topics_to_indicator",
]

logger = logging.getLogger(__name__)

NEWSGROUPS_URL = "http://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz"
# SHA-256 of the canonical 20news-bydate.tar.gz (14,494,414 bytes).
NEWSGROUPS_SHA256 = "5e49dcc7cb243d245ca1c0db2ca0b9ef70d577156be8f44bafd459cd189394af"
WEBKB_URL = (
    "http://www.cs.cmu.edu/afs/cs.cmu.edu/project/theo-20/www/data/webkb-data.gtar.gz")

_SUBSETS = ("train", "test", "all")
_WEBKB_CLASSES = ("course", "department", "faculty", "other", "project", "staff", "student")
_WEBKB_UNIVERSITIES = ("cornell", "misc", "texas", "washington", "wisconsin")
_WEBKB_HELD_OUT = ("cornell", "texas", "washington", "wisconsin")
_REUTERS_VIEWS = ("modapte", "r90", "r8")
_DOWNLOAD_CHUNK = 1 << 20
# Longest socket timeout accepted (seconds): beyond it the OS refuses the value.
_MAX_TIMEOUT = 1e6


class DatasetNotFoundError(FileNotFoundError, ValueError):
    """A corpus could not be found at the given path.

    It derives from both :class:`FileNotFoundError` and :class:`ValueError`, so
    callers may catch either: a wrong path is a missing file and a bad argument.
    """


class IncompleteCorpusWarning(UserWarning):
    """A corpus on disk holds other files or counts than the published one.

    The loaders of 20 Newsgroups, Reuters-21578 and the SMART collections
    know the published sizes and warn with this class when a copy differs,
    such as a folder left by an interrupted extraction: results on it are
    not comparable with published ones. Extract the archive again, or load
    the archive itself (its end and checksum are verified). Small corpora in
    the same layout, made on purpose, warn too: filter this class for them.
    """


def _warn_incomplete(message):
    # The warning names the user's line, through fetch_* as well as load_*.
    warnings.warn(message, IncompleteCorpusWarning, stacklevel=_callers_stacklevel())


def _listed(items, limit=5):
    """Up to ``limit`` items joined by commas, then how many more."""
    shown = ", ".join(items[:limit])
    return shown if len(items) <= limit else f"{shown} and {len(items) - limit} more"


# ---------------------------------------------------------------------------
# Result objects
# ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False)
class TextCorpus:
    """A single-label text classification corpus.

    Attributes
    ----------
    data : list of str, length n_documents
        The raw documents, decoded as Latin-1.
    target : ndarray of shape (n_documents,), dtype int64
        Class index of each document, into ``target_names``.
    target_names : list of str, length n_classes
        Class names; ``target_names[target[i]]`` is the class of document i.
    filenames : list of str, length n_documents
        Where each document came from, relative to the corpus root (the same
        whether it was read from an archive or from an extracted folder).
    """

    data: list
    target: np.ndarray
    target_names: list
    filenames: list

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        return (f"{type(self).__name__}(n_documents={len(self.data)}, "
                f"n_classes={len(self.target_names)})")


@dataclass(frozen=True, eq=False, repr=False)
class NewsgroupsCorpus(TextCorpus):
    """The 20 Newsgroups "bydate" corpus, as returned by :func:`load_20newsgroups`.

    Attributes
    ----------
    data, target, target_names, filenames
        See :class:`TextCorpus`; ``target_names`` are the 20 group names sorted
        alphabetically and ``filenames`` read like
        ``"20news-bydate-train/alt.atheism/49960"``.
    split : ndarray of shape (n_documents,), dtype str
        ``"train"`` or ``"test"`` for each message (useful with ``subset="all"``).
    subset : str
        The subset that was asked for: ``"train"``, ``"test"`` or ``"all"``.
    """

    split: np.ndarray = field(default_factory=lambda: np.empty(0, dtype="<U5"))
    subset: str = "train"

    def __repr__(self):
        return (f"NewsgroupsCorpus(subset={self.subset!r}, n_documents={len(self.data)}, "
                f"n_classes={len(self.target_names)})")


@dataclass(frozen=True, eq=False, repr=False)
class WebKBCorpus(TextCorpus):
    """The WebKB "4 universities" pages, as returned by :func:`load_webkb`.

    Attributes
    ----------
    data, target, target_names, filenames
        See :class:`TextCorpus`; ``target_names`` are the requested classes in
        the order given, and ``filenames`` read like
        ``"student/cornell/http:^^www.cs.cornell.edu^Info^People^..."``.
    universities : ndarray of shape (n_documents,), dtype str
        The university folder of each page: cornell, misc, texas, washington
        or wisconsin.
    splits : list of (ndarray, ndarray)
        Leave-one-university-out folds, one per name in ``held_out``: the
        first array indexes the training pages (the three other universities
        and misc), the second the test pages (the held-out university; empty
        if the selected classes have no page there, which
        :func:`kgeo.experiments.run_zhang2005` refuses).
    held_out : list of str
        ``["cornell", "texas", "washington", "wisconsin"]``: the test
        university of each fold in ``splits``.
    """

    universities: np.ndarray = field(default_factory=lambda: np.empty(0, dtype="<U10"))
    splits: list = field(default_factory=list)
    held_out: list = field(default_factory=list)


@dataclass(frozen=True, eq=False, repr=False)
class ReutersCorpus:
    """Reuters-21578 documents with their topics, as returned by :func:`load_reuters21578`.

    Attributes
    ----------
    data : list of str, length n_documents
        ``TITLE`` and ``BODY`` of each story joined by a newline, with the
        SGML entities decoded and control characters removed.
    topics : list of list of str, length n_documents
        Topic categories of each document, in file order, without duplicates
        and restricted to ``category_names``.
    category_names : list of str, length n_categories
        Sorted names of the categories of the chosen ``view``.
    target : ndarray of shape (n_documents,) or None
        For the single-label ``view="r8"``, the index of each document's one
        topic in ``category_names``; ``None`` for the multi-label views.
    filenames : list of str, length n_documents
        The ``reut2-NNN.sgm`` file holding each story.
    newids : ndarray of shape (n_documents,), dtype int64
        The ``NEWID`` attribute of each story.
    split : ndarray of shape (n_documents,), dtype str
        ``"train"`` or ``"test"`` (ModApte ``LEWISSPLIT``) for each story.
    view : str
        ``"modapte"``, ``"r90"`` or ``"r8"``.
    subset : str
        ``"train"``, ``"test"`` or ``"all"``.
    """

    data: list
    topics: list
    category_names: list
    target: object
    filenames: list
    newids: np.ndarray
    split: np.ndarray
    view: str
    subset: str

    @property
    def target_names(self):
        """Alias of ``category_names`` (the class names of ``target``)."""
        return self.category_names

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        return (f"ReutersCorpus(view={self.view!r}, subset={self.subset!r}, "
                f"n_documents={len(self.data)}, n_categories={len(self.category_names)})")

    def indicator_matrix(self, sparse=True, dtype=np.int8):
        """Return the document-by-category 0/1 matrix of ``topics``.

        Parameters
        ----------
        sparse : bool, default=True
            Return a CSR matrix if True, a dense ndarray otherwise.
        dtype : numpy dtype, default=np.int8
            Element type of the result.

        Returns
        -------
        Y : scipy.sparse.csr_matrix or ndarray of shape (n_documents, n_categories)
            ``Y[i, j] == 1`` when document i has category ``category_names[j]``.
        """
        Y, _ = topics_to_indicator(self.topics, self.category_names, sparse=sparse, dtype=dtype)
        return Y


@dataclass(frozen=True, eq=False, repr=False)
class IRCollection:
    """A classic retrieval test collection, as returned by :func:`load_smart`.

    Attributes
    ----------
    name : str
        ``"adi"``, ``"cisi"``, ``"cran"`` or ``"med"``.
    doc_ids : ndarray of shape (n_documents,), dtype int64
        The ``.I`` number of each document, in file order.
    documents : list of str, length n_documents
        Title (``.T``) and abstract (``.W``) of each document joined by a newline.
    doc_fields : list of dict, length n_documents
        Every field of each record, keyed by its tag letter (``"T"``, ``"A"``,
        ``"B"``, ``"W"``, ``"X"``, ...); a repeated tag's texts are joined by a
        newline.
    query_ids : ndarray of shape (n_queries,), dtype int64
        The number under which the relevance judgements name each query. For
        CRAN these are 1..225 in file order, because ``cranqrel`` renumbers
        the queries; elsewhere they equal ``original_query_ids``.
    original_query_ids : ndarray of shape (n_queries,), dtype int64
        The ``.I`` number of each query in the query file.
    queries : list of str, length n_queries
        Title and text of each query, joined like ``documents``.
    query_fields : list of dict, length n_queries
        Every field of each query record, as in ``doc_fields``.
    qrels : dict of int to frozenset of int
        For each judged query id, the ids of its relevant documents. Queries
        without any judgement are absent (CISI judges 76 of its 112 queries).
    relevance : dict of int to dict of int to int
        The judgement of every listed (query, document) pair. CRAN keeps the
        codes of ``cranqrel`` (1 to 4, and -1 for "no interest", which is not
        counted as relevant in ``qrels``); the binary collections give 1.
    """

    name: str
    doc_ids: np.ndarray
    documents: list
    doc_fields: list
    query_ids: np.ndarray
    original_query_ids: np.ndarray
    queries: list
    query_fields: list
    qrels: dict
    relevance: dict

    def __repr__(self):
        return (f"IRCollection(name={self.name!r}, n_documents={len(self.documents)}, "
                f"n_queries={len(self.queries)}, n_judged={len(self.qrels)})")


# ---------------------------------------------------------------------------
# Small shared helpers
# ---------------------------------------------------------------------------

def _as_path(path, name="path"):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or os.PathLike, got {type(path).__name__}")
    if os.fspath(path) in ("", b""):
        # Path("") is the working directory: whatever lies there would load.
        raise ValueError(f"{name} must name a file or folder, got an empty path")
    try:
        return Path(path).expanduser()
    except RuntimeError as exc:  # "~someone" for a user this system does not know
        raise ValueError(f"{name} {os.fspath(path)!r}: {exc}") from None


def _check_choice(value, choices, name):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def _is_file(entry):
    """Whether a folder entry (``Path`` or ``os.DirEntry``) is a file, links
    followed; a link to nothing is an error, not a file to skip: the same
    member in an archive is refused, and skipping it would lose a document."""
    if entry.is_file():
        return True
    if entry.is_symlink() and not os.path.exists(entry):
        raise ValueError(f"{os.fspath(entry)!r} is a symbolic link to "
                         f"{os.readlink(entry)!r}, which does not exist")
    return False


def _require_exists(path, what):
    if not path.exists():
        raise DatasetNotFoundError(f"{what}: {str(path)!r} does not exist")


_INT64 = np.iinfo(np.int64)


_DECIMAL = re.compile(r"[0-9]+\Z")
_SIGNED_DECIMAL = re.compile(r"-?[0-9]+\Z")


def _document_id(text):
    """A document or query number as an int in int64's range (the id arrays'
    type); ValueError otherwise.

    Only the digits 0-9: int() alone also reads '1_2' as 12, '+3' as 3 and
    other scripts' digits, so a damaged id would load under another number.
    """
    if not isinstance(text, str) or not _DECIMAL.match(text):
        raise ValueError(f"id {text!r} is not a number written in the digits 0-9")
    value = int(text)
    if not _INT64.min <= value <= _INT64.max:
        raise ValueError(f"id {value} does not fit in int64")
    return value


class _TailReader:
    """A read-only stream that remembers its last bytes.

    tarfile's stream mode ends its iteration quietly at the first header it
    cannot parse after the first member: a damaged archive would load as a
    shorter corpus. Reading through this wrapper lets ``_scan_tar`` check,
    afterwards, that tarfile stopped at an end-of-archive marker (two zero
    blocks), and then drain the stream to its end, where gzip, bzip2 and xz
    verify their checksums.
    """

    _KEEP = 1 << 16

    def __init__(self, raw):
        self.raw = raw
        self.position = 0          # bytes handed out so far
        self.recent = bytearray()  # the last up to _KEEP of them

    def read(self, size=-1):
        data = self.raw.read(size)
        self.position += len(data)
        self.recent += data
        del self.recent[:-self._KEEP]
        return data

    def ends_at(self, offset):
        """Whether two zero blocks start at ``offset``; then read to the end.

        tarfile stops at the first zero block, but a lone one is a header
        zeroed by damage (GNU tar warns "A lone zero block"): the members
        after it would be lost. The marker is two blocks. What follows it is
        padding of the last record, which old tar programs filled with
        leftovers (the SMART collections' archives do), so only the marker
        itself is checked, as tar does.
        """
        size = 2 * tarfile.BLOCKSIZE
        start = len(self.recent) - (self.position - offset)
        if start < 0:  # cannot happen: tarfile reads 10 KiB ahead at most
            return False
        marker = self.recent[start:start + size]
        while len(marker) < size:  # tarfile read no further than this
            more = self.raw.read(size - len(marker))
            if not more:
                break
            marker += more
        while self.raw.read(1 << 20):
            pass
        return len(marker) == size and not any(marker)


def _compression(path):
    """"gzip", "bzip2" or "xz" by the file's first bytes, or None."""
    with open(path, "rb") as fh:
        magic = fh.read(10)
    # Full magic numbers (gzip with deflate; bzip2 with its block size digit
    # and its first block's "1AY&SY"), so that a plain tar whose first member
    # is named "BZh..." stays plain.
    if magic[:3] == b"\x1f\x8b\x08":
        return "gzip"
    if magic[:3] == b"BZh" and magic[4:10] == b"1AY&SY" and magic[3:4] in b"123456789":
        return "bzip2"
    if magic[:6] == b"\xfd7zXZ\x00":
        return "xz"
    return None


def _open_decompressed(archive):
    """The archive's bytes as a tar stream, decompressed by the module that
    checks the format's own checksum (CRC-32 for gzip and bzip2, xz's check)."""
    opener = {"gzip": gzip.open, "bzip2": bz2.open, "xz": lzma.open}.get(
        _compression(archive), open)
    return opener(archive, "rb")


def _member_path(name):
    """A member name as the path it extracts to: "./a/b" and "a/b" are one
    file (archives made with ``tar -C folder -czf x.tar.gz .`` prefix "./")."""
    return posixpath.normpath(name)


def _link_target(member):
    """The member path (see ``_member_path``) a hard or symbolic link member points at."""
    if member.issym():
        return posixpath.normpath(posixpath.join(posixpath.dirname(member.name),
                                                 member.linkname))
    return _member_path(member.linkname)


class _ArchiveContentError(ValueError):
    """What an archive read whole holds is refused (not its format): raised
    through ``_stream_tar`` as it is, not as an unreadable archive."""


def _stream_tar(archive, on_member):
    """Call ``on_member(tf, member)`` for each member of ``archive``, in one
    streaming pass; a damaged or truncated archive raises ValueError."""
    try:
        with _open_decompressed(archive) as raw:
            stream = _TailReader(raw)
            n_members = 0
            with tarfile.open(fileobj=stream, mode="r|") as tf:
                for member in tf:
                    n_members += 1
                    on_member(tf, member)
                end = tf.offset
            if not stream.ends_at(end):
                raise tarfile.ReadError(
                    f"damaged or truncated: no valid member header and no end-of-archive "
                    f"marker at byte {end} of the tar stream ({n_members} members read)")
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError,
            ValueError) as exc:
        if isinstance(exc, _ArchiveContentError):
            raise
        raise ValueError(
            f"{str(archive)!r} is not a readable tar archive (gzip, bzip2, xz or "
            f"plain): {exc}") from exc
    except OSError as exc:
        if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError)):
            raise
        # bz2 reports a damaged stream as a bare OSError
        raise ValueError(f"{str(archive)!r} is not a readable tar archive: {exc}") from exc


def _scan_tar(archive, select):
    """Read the members of ``archive`` that ``select`` keeps, streaming.

    ``select(path)`` returns a key for a wanted regular file, ``None`` to skip
    it; it is given the member's path (``_member_path``), by which members
    are also told apart. Returns ``(kept, names)``: a dict key -> bytes, and
    the list of all regular member names (cheap: names come with the headers
    anyway). The archive is decompressed once, front to back (tarfile's
    stream mode), which is what makes the 18,846-member 20 Newsgroups
    archive load in about a second; a damaged or truncated archive is an
    error, never a shorter corpus, with one exception that tar itself
    shares: in an uncompressed archive, zeros over two or more whole header
    blocks read as the end-of-archive marker (compressed archives fail
    their checksum instead).

    A wanted link (hard or symbolic) gets the bytes of the file it points
    at, as a folder would: from the members kept so far, or, when its
    target was skipped or comes later, from a second pass over the archive
    that reads only such targets. Members are identified by their path
    (``_member_path``: "./a", "a" and "x/../a" are one file): a path that
    occurs twice is read as tar extracts it, the later copy replacing the
    earlier; two members of different paths that ``select`` gives the same
    key (one document under two top folders) are an error, where one would
    have been lost.
    """
    kept = {}
    kept_names = {}  # member path -> key in kept
    key_owner = {}   # key -> (member path, member name) it was selected from
    names = []
    files = set()    # every regular member's path
    links = {}       # link member path -> the path it points at
    pending = {}     # key of a wanted link -> the link member

    def claim(key, path, name):
        # Compared by path ("./a" and "a" are one file), named as the
        # archive lists its members.
        owner_path, owner_name = key_owner.setdefault(key, (path, name))
        if owner_path != path:
            raise _ArchiveContentError(
                f"{str(archive)!r} holds the same document twice, as members {owner_name!r} "
                f"and {name!r}: keep one copy of the corpus in the archive")

    def on_member(tf, member):
        path = _member_path(member.name)
        if member.islnk() or member.issym():
            names.append(member.name)
            links[path] = _link_target(member)
            key = select(path)
            if path in files:  # a link replacing a file of its name
                files.discard(path)
                kept.pop(kept_names.pop(path, None), None)
            if key is not None:
                claim(key, path, member.name)
                pending[key] = member
            return
        if not member.isfile():
            return
        names.append(member.name)
        files.add(path)
        links.pop(path, None)  # a file replacing a link of its name
        key = select(path)
        if key is not None:
            claim(key, path, member.name)
            pending.pop(key, None)
            kept[key] = tf.extractfile(member).read()
            kept_names[path] = key

    _stream_tar(archive, on_member)
    if not pending:
        return kept, names

    def resolve(member):
        # Follow links to links, as a folder would, to a regular member.
        name, seen = _member_path(member.name), set()
        while name in links and name not in seen:
            seen.add(name)
            name = links[name]
        if name in files:
            return name
        kind = "hard link" if member.islnk() else "symbolic link"
        raise ValueError(
            f"{str(archive)!r}: member {member.name!r} is a {kind} to "
            f"{member.linkname!r}, which is not a regular file of the archive")

    targets = {key: resolve(member) for key, member in pending.items()}
    missing = {name for name in targets.values() if name not in kept_names}
    found = {}
    if missing:
        def on_target(tf, member):
            if member.isfile() and _member_path(member.name) in missing:
                found[_member_path(member.name)] = tf.extractfile(member).read()
        _stream_tar(archive, on_target)
    for key, name in targets.items():
        kept[key] = kept[kept_names[name]] if name in kept_names else found[name]
    return kept, names


def _read_bytes(path):
    with open(path, "rb") as fh:
        return fh.read()


def _decode(raw):
    return raw.decode("latin-1")


def _warn_nul_bytes(raw, keys, name_of):
    """Warn about documents holding NUL bytes, naming the first.

    The corpora are single-byte text (none of the distributed files holds a
    NUL); a file saved as UTF-16 has one after every ASCII letter, and
    Rainbow's lexer, like RainbowVectorizer, ends a document at its first
    NUL: such a document silently had no words.
    """
    with_nul = [k for k in keys if b"\x00" in raw[k]]
    if with_nul:
        warnings.warn(
            f"{len(with_nul)} document(s) hold NUL bytes, such as {name_of(with_nul[0])!r}: "
            f"not single-byte text (UTF-16, or binary?); Rainbow's lexer, and "
            f"RainbowVectorizer, end a document at its first NUL", UserWarning,
            stacklevel=_callers_stacklevel())


# ---------------------------------------------------------------------------
# 20 Newsgroups
# ---------------------------------------------------------------------------

# Messages per group in the published bydate corpus (train, test): 11,314 and
# 7,532 in all (J. Rennie's 20news-bydate.tar.gz).
_NG_BYDATE_COUNTS = {
    "alt.atheism": (480, 319), "comp.graphics": (584, 389),
    "comp.os.ms-windows.misc": (591, 394), "comp.sys.ibm.pc.hardware": (590, 392),
    "comp.sys.mac.hardware": (578, 385), "comp.windows.x": (593, 395),
    "misc.forsale": (585, 390), "rec.autos": (594, 396), "rec.motorcycles": (598, 398),
    "rec.sport.baseball": (597, 397), "rec.sport.hockey": (600, 399),
    "sci.crypt": (595, 396), "sci.electronics": (591, 393), "sci.med": (594, 396),
    "sci.space": (593, 394), "soc.religion.christian": (599, 398),
    "talk.politics.guns": (546, 364), "talk.politics.mideast": (564, 376),
    "talk.politics.misc": (465, 310), "talk.religion.misc": (377, 251),
}
_NG_MEMBER = re.compile(r"(?:^|/)20news-bydate-(train|test)/([^/]+)/([0-9]+)\Z")
_NG_ARCHIVE_NAMES = ("20news-bydate.tar.gz", "20news-bydate.tgz", "20news-bydate.tar")


def _is_archive(path):
    """Whether the file starts as an archive does: gzip, bzip2 or xz's magic
    number, or a plain tar's first header. An unreadable file is none."""
    try:
        return _compression(path) is not None or tarfile.is_tarfile(path)
    except OSError:
        return False


def _refuse_member_file(path, corpus, folder):
    # One of the corpus's own files passed for the corpus: the archive
    # reader's "not a readable tar archive" did not say what would load.
    raise DatasetNotFoundError(
        f"{str(path)!r} is one of the {corpus} files, not the corpus: pass the folder "
        f"holding them, {str(folder)!r}, or the archive")


def _locate_20newsgroups(path):
    """Return ("tar", file) or ("dir", root holding 20news-bydate-{train,test}/)."""
    _require_exists(path, "20 Newsgroups corpus not found")
    if path.is_file():
        # A file two folders below one named as a split is a message, unless
        # it is an archive: a cache (or a download) kept in such a folder.
        if (path.parent.parent.name in ("20news-bydate-train", "20news-bydate-test")
                and not _is_archive(path)):
            _refuse_member_file(path, "20 Newsgroups", path.parent.parent.parent)
        return "tar", path
    candidates = [path, path / "20news-bydate"]
    for root in candidates:
        if (root / "20news-bydate-train").is_dir() or (root / "20news-bydate-test").is_dir():
            return "dir", root
        for archive in _NG_ARCHIVE_NAMES:
            if (root / archive).is_file():
                return "tar", root / archive
    raise DatasetNotFoundError(
        f"no 20 Newsgroups corpus under {str(path)!r}: expected the folders "
        f"20news-bydate-train/ and 20news-bydate-test/, or 20news-bydate.tar.gz, in it "
        f"or in its 20news-bydate/ subfolder")


def load_20newsgroups(path, subset="train"):
    """Load the 20 Newsgroups "bydate" corpus from a local copy.

    Parameters
    ----------
    path : str or os.PathLike
        One of: the archive ``20news-bydate.tar.gz`` itself (members
        ``20news-bydate-train/<group>/<id>`` and ``20news-bydate-test/<group>/<id>``);
        a folder holding the extracted ``20news-bydate-train/`` and
        ``20news-bydate-test/``; a folder holding ``20news-bydate.tar.gz``; or a
        folder whose ``20news-bydate/`` subfolder holds either of these.
    subset : {"train", "test", "all"}, default="train"
        Which split to return. ``"all"`` returns the training messages
        followed by the test messages; ``split`` tells them apart.

    Returns
    -------
    corpus : NewsgroupsCorpus
        Messages decoded as Latin-1, with their headers (strip them with
        ``RainbowVectorizer(skip_header=True)``, which reads everything up to
        the first blank line as header: a new text without one, such as a
        sentence typed in, is then all header and has no word). Groups are numbered in
        alphabetical order; messages are ordered by split (train first), then
        group, then numeric file id. The canonical archive gives 11,314
        training and 7,532 test messages in 20 groups.

    Raises
    ------
    DatasetNotFoundError
        If ``path`` does not exist or holds no recognisable copy.
    ValueError
        If ``subset`` is unknown, the archive is corrupt, or no message of the
        subset is found.

    Warns
    -----
    IncompleteCorpusWarning
        If the copy has the 20 published groups, or in a split the first of
        them in the archive's order (alt.atheism, comp.graphics, ...), but, in
        the subset loaded, other numbers of messages per group than the
        published corpus: a folder left by an interrupted extraction, say.
    """
    subset = _check_choice(subset, _SUBSETS, "subset")
    path = _as_path(path)
    kind, source = _locate_20newsgroups(path)
    wanted = ("train", "test") if subset == "all" else (subset,)

    groups = set()
    # The groups holding a message, per split: those of an interrupted
    # extraction are the first ones in the archive's (sorted) order.
    split_groups = {"train": set(), "test": set()}
    raw = {}
    if kind == "tar":
        def select(name):
            m = _NG_MEMBER.search(name)
            if m is None:
                return None
            groups.add(m.group(2))
            split_groups[m.group(1)].add(m.group(2))
            if m.group(1) not in wanted:
                return None
            split, group, ident = m.groups()
            return split, group, int(ident), f"20news-bydate-{split}/{group}/{ident}"
        raw, _ = _scan_tar(source, select)
    else:
        for split in ("train", "test"):
            split_dir = source / f"20news-bydate-{split}"
            if not split_dir.is_dir():
                if split in wanted:
                    raise DatasetNotFoundError(
                        f"20 Newsgroups folder {str(split_dir)!r} does not exist "
                        f"(needed for subset={subset!r})")
                continue
            for group_dir in split_dir.iterdir():
                if not group_dir.is_dir():
                    continue
                # A group is a class when it holds a message (as in the archive,
                # where an empty folder leaves no member): an empty folder is not.
                messages = [e for e in group_dir.iterdir()
                            if e.name.isascii() and e.name.isdigit() and _is_file(e)]
                if messages:
                    groups.add(group_dir.name)
                    split_groups[split].add(group_dir.name)
                if split not in wanted:
                    continue
                for entry in messages:
                    key = (split, group_dir.name, int(entry.name),
                           f"20news-bydate-{split}/{group_dir.name}/{entry.name}")
                    raw[key] = _read_bytes(entry)

    if not raw:
        raise ValueError(
            f"no 20 Newsgroups message found for subset={subset!r} in {str(source)!r}; "
            f"expected files named 20news-bydate-<train|test>/<group>/<numeric id>")
    target_names = sorted(groups)
    published = sorted(_NG_BYDATE_COUNTS)
    # A copy is taken for the published corpus when its groups are those
    # 20, or when a split's are the first of them in the archive's order
    # (alt.atheism, comp.graphics, ...), as an extraction stopped part-way
    # through that split leaves them. Any other set of groups is another
    # corpus in the same layout.
    first_of_archive = max(
        (len(found) for found in split_groups.values()
         if found and sorted(found) == published[:len(found)]), default=0)
    if groups == set(published) or first_of_archive:
        # How many of the first groups it holds: not all the published
        # groups it holds ("the first 2" for alt.atheism and sci.space, a
        # review found).
        _check_newsgroups_counts(raw, wanted, source,
                                 20 if groups == set(published) else first_of_archive)
    index = {g: i for i, g in enumerate(target_names)}
    split_order = {"train": 0, "test": 1}
    # The file name breaks ties ("12" and "012" are both message 12), so the
    # order does not follow the archive's member order or a folder's listing.
    keys = sorted(raw, key=lambda k: (split_order[k[0]], k[1], k[2], k[3]))
    _warn_nul_bytes(raw, keys, lambda k: k[3])
    return NewsgroupsCorpus(
        data=[_decode(raw[k]) for k in keys],
        target=np.array([index[k[1]] for k in keys], dtype=np.int64),
        target_names=target_names,
        filenames=[k[3] for k in keys],
        split=np.array([k[0] for k in keys], dtype="<U5"),
        subset=subset,
    )


def _check_newsgroups_counts(keys, wanted, source, n_groups):
    """Warn where a copy taken for the published corpus has other counts.

    A folder left by an interrupted extraction holds the first groups of
    the archive's order, the last of them short: all 20 with some short or
    empty in training once the test split (the archive's first) is out, or
    only the test split's first groups before that. ``n_groups`` is how
    many of the published groups the copy holds.
    """
    found = collections.Counter((split, group) for split, group, _, _ in keys)
    differing, totals = [], []
    for split in wanted:
        column = 0 if split == "train" else 1
        for group, counts in sorted(_NG_BYDATE_COUNTS.items()):
            if found[split, group] != counts[column]:
                differing.append(f"{group} {found[split, group]:,} of {counts[column]:,} "
                                 f"{split}")
        total = sum(found[split, group] for group in _NG_BYDATE_COUNTS)
        published = sum(counts[column] for counts in _NG_BYDATE_COUNTS.values())
        totals.append(f"{total:,} of {published:,} {split} messages")
    if differing:
        held = ("the 20 groups" if n_groups == len(_NG_BYDATE_COUNTS)
                else f"the first {n_groups} of the 20 groups (in the archive's order)")
        _warn_incomplete(
            f"{str(source)!r} holds {held} of 20 Newsgroups bydate but not its "
            f"published messages: {'; '.join(totals)}; groups that differ: "
            f"{_listed(differing)}. An interrupted extraction? Extract "
            f"20news-bydate.tar.gz again, or load the archive itself")


# ---------------------------------------------------------------------------
# WebKB
# ---------------------------------------------------------------------------

_WEBKB_MEMBER = re.compile(
    r"(?:^|/)(" + "|".join(_WEBKB_CLASSES) + r")/(" + "|".join(_WEBKB_UNIVERSITIES)
    + r")/([^/]+)\Z")
# A page in a folder of any name, to warn about universities not loaded.
_WEBKB_OTHER_MEMBER = re.compile(
    r"(?:^|/)(" + "|".join(_WEBKB_CLASSES) + r")/([^/]+)/[^/]+\Z")
_WEBKB_ARCHIVE_NAMES = ("webkb-data.gtar.gz", "webkb-data.tar.gz", "webkb-data.tgz")


def _locate_webkb(path):
    """Return ("tar", file) or ("dir", root holding the class folders)."""
    _require_exists(path, "WebKB corpus not found")
    if path.is_file():
        # <class>/<university>/<page>, unless it is an archive: one kept in
        # ~student/Downloads, or fetch_webkb's cache in a folder "project",
        # was refused (and a fresh download removed).
        if path.parent.parent.name in _WEBKB_CLASSES and not _is_archive(path):
            _refuse_member_file(path, "WebKB", path.parent.parent.parent)
        return "tar", path
    roots = (path, path / "webkb")
    for root in roots:
        # A tree has a university folder in a class folder: a folder that
        # only shares a class's name ("project/") hid webkb/ beside it.
        if any((root / c / u).is_dir() for c in _WEBKB_CLASSES for u in _WEBKB_UNIVERSITIES):
            return "dir", root
        for archive in _WEBKB_ARCHIVE_NAMES:
            if (root / archive).is_file():
                return "tar", root / archive
    for root in roots:
        # Class folders of other universities only: read, to name them.
        if any(sub.is_dir() for c in _WEBKB_CLASSES if (root / c).is_dir()
               for sub in (root / c).iterdir()):
            return "dir", root
    raise DatasetNotFoundError(
        f"no WebKB corpus under {str(path)!r}: expected class folders "
        f"({', '.join(_WEBKB_CLASSES)}) or the archive ({', '.join(_WEBKB_ARCHIVE_NAMES)}), "
        f"in it or in its webkb/ subfolder")


def _warn_other_universities(where, others):
    warnings.warn(
        f"WebKB: {where} holds folders {others} that are not among the universities "
        f"{list(_WEBKB_UNIVERSITIES)}; their pages are not loaded", UserWarning,
        stacklevel=_callers_stacklevel())


def _check_webkb_classes(classes):
    if isinstance(classes, str):
        raise TypeError(
            f"classes must be a sequence of class names, got the single string {classes!r}")
    _check_ordered(classes, "classes")
    try:
        classes = list(classes)
    except TypeError:
        raise TypeError(f"classes must be a sequence of class names, got "
                        f"{type(classes).__name__}") from None
    if not classes:
        raise ValueError("classes must name at least one WebKB class, got an empty sequence")
    unknown = [c for c in classes if c not in _WEBKB_CLASSES]
    if unknown:
        raise ValueError(
            f"unknown WebKB classes {unknown}; expected some of {list(_WEBKB_CLASSES)}")
    if len(set(classes)) != len(classes):
        raise ValueError(f"classes must not repeat a class, got {classes}")
    return classes


def load_webkb(path, classes=("student", "faculty", "course", "project")):
    """Load the CMU WebKB "4 universities" pages from a local copy.

    Parameters
    ----------
    path : str or os.PathLike
        One of: the archive (``webkb-data.gtar.gz`` as distributed, any name);
        a folder laid out as ``<class>/<university>/<page>``; a folder holding
        such a ``webkb/`` folder; or a folder holding the archive, directly or
        in ``webkb/``.
    classes : sequence of str, default=("student", "faculty", "course", "project")
        The page classes to keep, among course, department, faculty, other,
        project, staff and student. ``target`` numbers them in the order given.
        The default is the usual four-class task (4,199 pages).

    Returns
    -------
    corpus : WebKBCorpus
        Pages decoded as Latin-1, each still starting with its HTTP header
        (strip it with ``RainbowVectorizer(skip_header=True, skip_html=True)``),
        ordered by class, then university, then file name. Two page names of
        the distribution end in a carriage return; they are kept verbatim.
        ``splits`` holds the four leave-one-university-out folds.

    Raises
    ------
    DatasetNotFoundError
        If ``path`` does not exist or holds no recognisable copy.
    ValueError
        If ``classes`` is empty, repeats a class or names an unknown one, the
        archive is corrupt, or no page of the classes is found.

    Warns
    -----
    IncompleteCorpusWarning
        If some of the classes have no page (the others are loaded).
    """
    classes = _check_webkb_classes(classes)
    path = _as_path(path)
    kind, source = _locate_webkb(path)
    index = {c: i for i, c in enumerate(classes)}

    raw = {}
    if kind == "tar":
        def select(name):
            m = _WEBKB_MEMBER.search(name)
            if m is None or m.group(1) not in index:
                return None
            return m.group(1), m.group(2), m.group(3)
        raw, names = _scan_tar(source, select)
        others = collections.defaultdict(set)
        for name in names:
            m = _WEBKB_OTHER_MEMBER.search(name)
            if m is not None and m.group(1) in index and m.group(2) not in _WEBKB_UNIVERSITIES:
                others[m.group(1)].add(m.group(2))
        for cls in classes:
            if others[cls]:
                _warn_other_universities(f"{str(source)!r}: {cls}/", sorted(others[cls]))
    else:
        for cls in classes:
            if (source / cls).is_dir():
                others = sorted(p.name for p in (source / cls).iterdir()
                                if p.is_dir() and p.name not in _WEBKB_UNIVERSITIES)
                if others:
                    _warn_other_universities(repr(str(source / cls)), others)
            for univ in _WEBKB_UNIVERSITIES:
                folder = source / cls / univ
                if not folder.is_dir():
                    continue
                # os.scandir keeps names byte-exact (a trailing "\r" included).
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if _is_file(entry):
                            raw[(cls, univ, entry.name)] = _read_bytes(entry.path)

    if not raw:
        raise ValueError(
            f"no WebKB page of classes {classes} found in {str(source)!r}; expected "
            f"files laid out as <class>/<university>/<page>")
    empty = [c for c in classes if not any(k[0] == c for k in raw)]
    if empty:
        # Every class of the distribution has pages: a class asked for and
        # found empty is a partial copy, which would otherwise only show as
        # a target name that no page has.
        _warn_incomplete(
            f"{str(source)!r} holds no page of the WebKB classes {empty}, which every "
            f"copy of the distribution has; they stay in target_names with no page. "
            f"An interrupted extraction? Extract the archive again, or load it itself")
    keys = sorted(raw, key=lambda k: (index[k[0]], k[1], k[2]))
    universities = np.array([k[1] for k in keys], dtype="<U10")
    splits = [(np.flatnonzero(universities != u), np.flatnonzero(universities == u))
              for u in _WEBKB_HELD_OUT]
    _warn_nul_bytes(raw, keys, lambda k: f"{k[0]}/{k[1]}/{k[2]}")
    return WebKBCorpus(
        data=[_decode(raw[k]) for k in keys],
        target=np.array([index[k[0]] for k in keys], dtype=np.int64),
        target_names=classes,
        filenames=[f"{k[0]}/{k[1]}/{k[2]}" for k in keys],
        universities=universities,
        splits=splits,
        held_out=list(_WEBKB_HELD_OUT),
    )


# ---------------------------------------------------------------------------
# Reuters-21578
# ---------------------------------------------------------------------------

_REUTERS_MEMBER = re.compile(r"(?:^|/)(reut2-\d{3}\.sgm)\Z")
_REUTERS_ARCHIVE_NAMES = ("reuters21578.tar.gz", "reuters21578.tgz", "reuters21578.tar")
_SGML_DOC = re.compile(r"<REUTERS\b([^>]*)>(.*?)</REUTERS>", re.S)
_SGML_OPEN = re.compile(r"<REUTERS\b")
_SGML_OPEN_TAG = re.compile(r"<REUTERS\b([^>]*)>")
_SGML_CLOSE = re.compile(r"</REUTERS>")
_SGML_ATTR = re.compile(r'([A-Za-z]+)\s*=\s*"([^"]*)"')
_SGML_TOPICS = re.compile(r"<TOPICS>(.*?)</TOPICS>", re.S)
_SGML_D = re.compile(r"<D>(.*?)</D>", re.S)
_SGML_TEXT = re.compile(r"<TEXT\b([^>]*)>(.*?)</TEXT>", re.S)
_SGML_TITLE = re.compile(r"<TITLE>(.*?)</TITLE>", re.S)
_SGML_BODY = re.compile(r"<BODY>(.*?)</BODY>", re.S)
_SGML_INNER = [(tag, re.compile(rf"<{tag}\b")) for tag in ("TOPICS", "TEXT", "TITLE", "BODY")]
_SGML_TAG = re.compile(r"<[^>]*>")
_SGML_ENTITY = re.compile(r"&(?:#(\d+)|(lt|gt|amp|quot));")
_SGML_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}


def _sgml_unescape(text):
    # The files hold &lt; &amp; and numeric references to control characters
    # (&#2; &#3; &#5; &#22; &#31; &#127; ...), the wire-service framing bytes.
    # Those control characters carry no text, so they are dropped.
    def repl(m):
        if m.group(2):
            return _SGML_NAMED[m.group(2)]
        digits = m.group(1).lstrip("0")
        if len(digits) > 7:  # beyond U+10FFFF; and int() refuses 4,300 digits or more
            return ""
        code = int(digits or "0")
        if code < 32 and code not in (9, 10, 13) or 127 <= code < 160:
            return ""
        # Surrogates (U+D800-U+DFFF) are no characters: one alone cannot even be encoded.
        return chr(code) if code < 0x110000 and not 0xD800 <= code < 0xE000 else ""
    return _SGML_ENTITY.sub(repl, text)


def _check_reuters_closed(text, filename):
    """Refuse a file where a <REUTERS> element is not closed before the next
    one opens, or at all, in one pass over the file: _SGML_DOC's lazy match
    from each open tag ran to the file's end where no </REUTERS> followed
    (6 s for one file without any, before its error: a review)."""
    opens = [m.start() for m in _SGML_OPEN.finditer(text)]
    closes = iter(m.start() for m in _SGML_CLOSE.finditer(text))
    close = next(closes, len(text))
    for i, start in enumerate(opens):
        while close < start:  # (a stray </REUTERS> between two elements)
            close = next(closes, len(text))
        end = opens[i + 1] if i + 1 < len(opens) else len(text)
        if close >= end:
            if i + 1 == len(opens):
                raise ValueError(
                    f"{filename}: {len(opens)} <REUTERS> elements open but {i} are closed "
                    f"by </REUTERS>; a story is cut or unclosed")
            tag = _SGML_OPEN_TAG.match(text, start)
            attrs = dict(_SGML_ATTR.findall(tag.group(1))) if tag else {}
            raise ValueError(
                f"{filename}: the <REUTERS> element with attributes {attrs} is not closed "
                f"before the next <REUTERS>")
        close = next(closes, len(text))


def _parse_reuters_file(text, filename):
    """Yield one dict per <REUTERS> element of an .sgm file."""
    _check_reuters_closed(text, filename)
    n_closed = 0
    for m in _SGML_DOC.finditer(text):
        n_closed += 1
        attrs = dict(_SGML_ATTR.findall(m.group(1)))
        inner = m.group(2)
        if _SGML_OPEN.search(inner):
            # Without this check a missing </REUTERS> merges two stories.
            raise ValueError(
                f"{filename}: the <REUTERS> element with attributes {attrs} is not closed "
                f"before the next <REUTERS>")
        for tag, opened in _SGML_INNER:
            if len(opened.findall(inner)) != inner.count(f"</{tag}>"):
                # Unclosed, the element's pattern finds nothing: no topics,
                # no body, read silently.
                raise ValueError(
                    f"{filename}: the <REUTERS> element with attributes {attrs} has "
                    f"<{tag}> elements not closed by </{tag}>")
        tm = _SGML_TOPICS.search(inner)
        raw_topics = [t.strip() for t in _SGML_D.findall(tm.group(1))] if tm else []
        title = body = ""
        xm = _SGML_TEXT.search(inner)
        if xm is not None:
            text_attrs = dict(_SGML_ATTR.findall(xm.group(1)))
            content = xm.group(2)
            ttl = _SGML_TITLE.search(content)
            bdy = _SGML_BODY.search(content)
            title = ttl.group(1) if ttl else ""
            if bdy:
                body = bdy.group(1)
            elif text_attrs.get("TYPE") == "UNPROC":
                # Unprocessed stories have no TITLE/BODY markup: the whole
                # TEXT element is the story.
                body = _SGML_TAG.sub(" ", content)
        title = _sgml_unescape(title).strip()
        body = _sgml_unescape(body).strip()
        try:
            newid = _document_id(attrs.get("NEWID", ""))
        except ValueError:
            raise ValueError(
                f"{filename}: <REUTERS> element without an integer NEWID attribute in "
                f"int64's range (attributes {reprlib.repr(attrs)})") from None
        yield {
            "newid": newid,
            "topics_flag": attrs.get("TOPICS", ""),
            "lewissplit": attrs.get("LEWISSPLIT", ""),
            "raw_topics": raw_topics,
            "text": "\n".join(part for part in (title, body) if part),
            "filename": filename,
        }
    n_open = len(_SGML_OPEN.findall(text))
    if n_open != n_closed:  # the last story is cut or unclosed (others fail above)
        raise ValueError(f"{filename}: {n_open} <REUTERS> elements open but {n_closed} are "
                         f"closed by </REUTERS>; a story is cut or unclosed")


def _locate_reuters(path):
    """Return ("tar", file) or ("dir", folder holding reut2-*.sgm)."""
    _require_exists(path, "Reuters-21578 corpus not found")
    if path.is_file():
        if re.fullmatch(r"reut2-\d{3}\.sgm", path.name, flags=re.IGNORECASE):
            _refuse_member_file(path, "Reuters-21578", path.parent)
        return "tar", path
    for root in (path, path / "reuters21578"):
        if any(root.glob("reut2-*.sgm")):
            return "dir", root
        for archive in _REUTERS_ARCHIVE_NAMES:
            if (root / archive).is_file():
                return "tar", root / archive
    raise DatasetNotFoundError(
        f"no Reuters-21578 corpus under {str(path)!r}: expected reut2-000.sgm ... "
        f"reut2-021.sgm or reuters21578.tar.gz, in it or in its reuters21578/ subfolder")


def _unique(seq):
    return list(dict.fromkeys(seq))


# Distribution 1.0: 22 files of 1,000 stories each, 578 in the last (its
# README.txt, section VI), NEWIDs 1 to 21,578 in file order.
_REUTERS_STORIES_PER_FILE = {f"reut2-{i:03d}.sgm": 1000 for i in range(21)}
_REUTERS_STORIES_PER_FILE["reut2-021.sgm"] = 578


def _check_reuters_files(stories_per_file, source):
    """Warn where the files read are not Distribution 1.0's 22 whole files."""
    missing = [name for name in _REUTERS_STORIES_PER_FILE if name not in stories_per_file]
    differences = []
    if missing:
        differences.append(f"{len(missing)} of its 22 files missing ({_listed(missing, 3)})")
    other = sorted(set(stories_per_file) - set(_REUTERS_STORIES_PER_FILE))
    if other:
        differences.append(f"files it does not have ({_listed(other, 3)})")
    short = [f"{name} {n:,} stories, not {_REUTERS_STORIES_PER_FILE[name]:,}"
             for name, n in sorted(stories_per_file.items())
             if name in _REUTERS_STORIES_PER_FILE and n != _REUTERS_STORIES_PER_FILE[name]]
    if short:
        differences.append(_listed(short, 3))
    if differences:
        _warn_incomplete(
            f"{str(source)!r} is not a whole copy of Reuters-21578 Distribution 1.0 "
            f"(reut2-000.sgm ... reut2-021.sgm, 1,000 stories each and 578 in the last): "
            f"{'; '.join(differences)}. ModApte's 9,603 training and 3,299 test stories "
            f"are not all there. Extract reuters21578.tar.gz again, or load the archive "
            f"itself")


def load_reuters21578(path, subset="train", view="modapte"):
    """Load Reuters-21578 (Distribution 1.0) with the ModApte split.

    Parameters
    ----------
    path : str or os.PathLike
        The ``reuters21578.tar.gz`` archive, a folder holding the extracted
        ``reut2-000.sgm`` ... ``reut2-021.sgm``, or a folder holding the
        archive or a ``reuters21578/`` folder with either.
    subset : {"train", "test", "all"}, default="train"
        ModApte training stories (``LEWISSPLIT="TRAIN"``), test stories
        (``LEWISSPLIT="TEST"``), or both; always with ``TOPICS="YES"``.
        Stories keep their file order (increasing ``NEWID``).
    view : {"modapte", "r90", "r8"}, default="modapte"
        Which documents and categories to return:

        - ``"modapte"``: every ModApte story (9,603 train / 3,299 test),
          including those without any topic; ``category_names`` are all the
          topics occurring in ModApte stories of either split.
        - ``"r90"``: the 90 categories that have at least one training and one
          test story, and the stories having at least one of them (7,770 /
          3,019); ``topics`` keep only those 90 categories.
        - ``"r8"``: the single-label R8 set of Cardoso-Cachopo (2007). Take
          R10, the ten categories with the most ModApte training stories, keep
          the stories whose ``TOPICS`` element lists exactly one entry and
          that entry is in R10, then keep the categories left with at least
          one training and one test story (wheat and corn never occur alone):
          acq, crude, earn, grain, interest, money-fx, ship, trade; 5,485 /
          2,189 stories. ``target`` holds the class indices. Story 19918
          lists ``trade`` twice, so it is not single-label.

    Returns
    -------
    corpus : ReutersCorpus
        ``data[i]`` is the story's ``TITLE`` and ``BODY`` joined by a newline
        (the whole ``TEXT`` for ``TYPE="UNPROC"`` stories, the title alone for
        ``TYPE="BRIEF"`` ones). ``category_names`` and the category sets do
        not depend on ``subset``, so train and test indicator matrices align.

    Raises
    ------
    DatasetNotFoundError
        If ``path`` does not exist or holds no recognisable copy.
    ValueError
        If ``subset`` or ``view`` is unknown, or the archive is corrupt or
        holds no ``reut2-NNN.sgm`` file.

    Warns
    -----
    IncompleteCorpusWarning
        If the files are not Distribution 1.0's 22 (``reut2-000.sgm`` ...
        ``reut2-021.sgm``) with their 1,000 stories each (578 in the last).
    """
    subset = _check_choice(subset, _SUBSETS, "subset")
    view = _check_choice(view, _REUTERS_VIEWS, "view")
    path = _as_path(path)
    kind, source = _locate_reuters(path)
    if kind == "tar":
        def select(name):
            m = _REUTERS_MEMBER.search(name)
            return m.group(1) if m else None
        files, _ = _scan_tar(source, select)
    else:
        files = {p.name: _read_bytes(p) for p in source.glob("reut2-*.sgm")
                 if _REUTERS_MEMBER.search(p.name) and _is_file(p)}
    if not files:
        raise ValueError(
            f"no reut2-NNN.sgm file found in {str(source)!r}; expected the SGML "
            f"files of Reuters-21578 Distribution 1.0")

    # ModApte: stories with TOPICS="YES" and LEWISSPLIT TRAIN or TEST.
    stories = []
    first_seen = {}  # NEWID -> file: a story read twice would be counted twice
    stories_per_file = {}
    for name in sorted(files):
        n_in_file = 0
        for doc in _parse_reuters_file(_decode(files[name]), name):
            n_in_file += 1
            if doc["newid"] in first_seen:
                raise ValueError(f"{name}: NEWID {doc['newid']} appears twice (first in "
                                 f"{first_seen[doc['newid']]}); the files must hold each story once")
            first_seen[doc["newid"]] = name
            split = doc["lewissplit"].lower()
            if doc["topics_flag"] == "YES" and split in ("train", "test"):
                doc["split"] = split
                doc["topics"] = _unique(doc["raw_topics"])
                stories.append(doc)
        if n_in_file == 0:
            raise ValueError(f"{name} holds no <REUTERS> element: not a Reuters-21578 SGML file")
        stories_per_file[name] = n_in_file
    _check_reuters_files(stories_per_file, source)

    def count_by_split(docs, key):
        counts = {"train": {}, "test": {}}
        for d in docs:
            for t in key(d):
                counts[d["split"]][t] = counts[d["split"]].get(t, 0) + 1
        return counts

    if view == "modapte":
        categories = sorted({t for d in stories for t in d["topics"]})
        selected = stories
    elif view == "r90":
        counts = count_by_split(stories, lambda d: d["topics"])
        categories = sorted(set(counts["train"]) & set(counts["test"]))
        keep = set(categories)
        selected = []
        for d in stories:
            topics = [t for t in d["topics"] if t in keep]
            if topics:
                selected.append({**d, "topics": topics})
    else:
        train_counts = count_by_split(stories, lambda d: d["topics"])["train"]
        # Most training stories first; ties broken by name for determinism.
        r10 = sorted(train_counts, key=lambda t: (-train_counts[t], t))[:10]
        single = [d for d in stories if len(d["raw_topics"]) == 1 and d["raw_topics"][0] in r10]
        counts = count_by_split(single, lambda d: d["topics"])
        categories = sorted(set(counts["train"]) & set(counts["test"]))
        selected = [d for d in single if d["topics"][0] in categories]

    if subset != "all":
        selected = [d for d in selected if d["split"] == subset]
    if not selected:
        raise ValueError(
            f"no Reuters-21578 story of view={view!r} in subset={subset!r} under "
            f"{str(path)!r}")
    target = None
    if view == "r8":
        index = {c: i for i, c in enumerate(categories)}
        target = np.array([index[d["topics"][0]] for d in selected], dtype=np.int64)
    return ReutersCorpus(
        data=[d["text"] for d in selected],
        topics=[list(d["topics"]) for d in selected],
        category_names=categories,
        target=target,
        filenames=[d["filename"] for d in selected],
        newids=np.array([d["newid"] for d in selected], dtype=np.int64),
        split=np.array([d["split"] for d in selected], dtype="<U5"),
        view=view,
        subset=subset,
    )


def topics_to_indicator(topics, category_names=None, sparse=True, dtype=np.int8):
    """Turn per-document label lists into a 0/1 indicator matrix.

    Parameters
    ----------
    topics : sequence of sequence of str, length n_documents
        Labels of each document (an empty sequence for none; a plain str
        counts as one label).
    category_names : sequence of str or None, default=None
        Column order. If None, the sorted union of all labels.
    sparse : bool, default=True
        Return a CSR matrix if True, a dense ndarray otherwise.
    dtype : numpy dtype, default=np.int8
        Element type of the result.

    Returns
    -------
    Y : scipy.sparse.csr_matrix or ndarray of shape (n_documents, n_categories)
        ``Y[i, j] == 1`` when document i has label ``category_names[j]``; a
        label repeated within a document still gives 1.
    category_names : list of str
        The column labels.

    Raises
    ------
    ValueError
        If a document has a label missing from ``category_names``, or
        ``category_names`` repeats a name.
    TypeError
        If ``sparse`` is not a bool, ``dtype`` not a bool, integer or float
        dtype, or a label or name not a str.
    """
    if not isinstance(sparse, (bool, np.bool_)):
        raise TypeError(f"sparse must be a bool, got {sparse!r}")
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be a NumPy dtype, got {dtype!r}") from None
    if dtype.kind not in "biuf" or (sparse and dtype == np.float16):
        raise TypeError(f"dtype must be a bool, integer or float dtype"
                        f"{' other than float16 (scipy.sparse has none)' if sparse else ''}, "
                        f"got {dtype}")
    if isinstance(topics, str):
        raise TypeError("topics must be a sequence of label lists, got a single str")
    if is_data_frame(topics):
        # Iterating over a data frame gives its column names.
        raise TypeError(f"topics must be a sequence of label lists, got a data frame "
                        f"({type(topics).__name__}); pass its column, such as df['topics']")
    _check_ordered(topics, "topics")
    if not hasattr(topics, "__iter__"):
        raise TypeError(f"topics must be a sequence of label lists, got {type(topics).__name__}")
    try:
        # bytes and bytearray kept whole: list(b"earn") would be its codes,
        # refused as "got 101", which did not name the bytes.
        topics = [[topic] if isinstance(topic, (str, bytes, bytearray)) else list(topic)
                  for topic in topics]
    except TypeError as exc:
        raise TypeError(f"topics must be a sequence of label lists (or of single str "
                        f"labels): {exc}") from None
    bad = [(i, label) for i, labels in enumerate(topics) for label in labels
           if not isinstance(label, str)]
    if bad:
        raise TypeError(f"topic labels must be str, got {bad[0][1]!r} in document {bad[0][0]}")
    if category_names is None:
        category_names = sorted({t for labels in topics for t in labels})
    elif isinstance(category_names, str) or not hasattr(category_names, "__iter__"):
        raise TypeError(f"category_names must be a sequence of str or None, got "
                        f"{category_names!r}")
    _check_ordered(category_names, "category_names")
    category_names = list(category_names)
    bad = [c for c in category_names if not isinstance(c, str)]
    if bad:
        raise TypeError(f"category_names must hold str, got {bad[0]!r}")
    repeated = sorted(c for c, n in collections.Counter(category_names).items() if n > 1)
    if repeated:
        # The later column would get every document of the name, the earlier
        # one none: a column silently empty.
        raise ValueError(f"category_names must not repeat a name, got {repeated} more than "
                         f"once")
    index = {c: j for j, c in enumerate(category_names)}
    rows, cols = [], []
    for i, labels in enumerate(topics):
        for label in dict.fromkeys(labels):
            j = index.get(label)
            if j is None:
                raise ValueError(
                    f"document {i} has label {label!r}, which is not among the "
                    f"{len(category_names)} category_names")
            rows.append(i)
            cols.append(j)
    shape = (len(topics), len(category_names))
    if not sparse:
        Y = np.zeros(shape, dtype=dtype)
        Y[rows, cols] = 1
        return Y, category_names
    Y = sp.csr_matrix((np.ones(len(rows), dtype=dtype), (np.array(rows, dtype=np.int64),
                                                          np.array(cols, dtype=np.int64))),
                      shape=shape, dtype=dtype)
    Y.sort_indices()
    return Y, category_names


# ---------------------------------------------------------------------------
# SMART-format retrieval collections (ADI, CISI, CRAN, MED)
# ---------------------------------------------------------------------------

# Per collection: documents file, queries file, relevance files (first found
# wins) with their format. "pairs": "q doc ..." (trailing placeholder columns),
# "trec": "q iteration doc grade", "graded": "q doc grade".
_SMART_FILES = {
    "adi": ("ADI.ALL", "ADI.QRY", (("ADI.REL", "pairs"),)),
    "cisi": ("CISI.ALL", "CISI.QRY", (("CISI.REL", "pairs"),)),
    "cran": ("cran.all.1400", "cran.qry", (("cranqrel", "graded"),)),
    "med": ("MED.ALL", "MED.QRY", (("MED.REL", "trec"), ("MED.REL.OLD", "pairs"))),
}
# Published sizes: documents, queries and relevance judgements (the distinct
# pairs judged, one a line of the relevance file; CRAN's include its 225
# judgements of code -1).
_SMART_SIZES = {"adi": (82, 35, 170), "cisi": (1460, 112, 3114), "cran": (1400, 225, 1837),
                "med": (1033, 30, 696)}
# Columns of a relevance file's line, by format (a line cut short is refused:
# the first two columns of a cut "pairs" line can read as another pair).
_QRELS_COLUMNS = {"pairs": (4, "query doc 0 0.0"), "trec": (4, "query 0 doc grade"),
                  "graded": (3, "query doc grade")}
_SMART_TAG = re.compile(r"\.([A-Z])(?:[ \t]+(\S+))?[ \t]*\Z")
# '.I' then a blank, a digit or nothing: '.I2' is a record start with its
# blank missing, not text (read as text, its record would be lost in the one
# before); a line such as '.In' stays text.
_SMART_RECORD_START = re.compile(r"\.I(?:[ \t\d]|\Z)")
# Tags that, once a document's abstract has begun, are stray lines of the
# abstract rather than new fields (CRAN document 240 has ".A" and ".B" lines
# inside its abstract, documents 576 and 578 a second ".W").
_SMART_FOLD_AFTER_W = frozenset("TABW")


def _parse_smart_records(text, what, fold_into_abstract):
    """Parse ``.I``-delimited records into (ids, list of {tag: text})."""
    ids, records = [], []
    seen_ids = set()  # "in ids[:-1]" made the check quadratic: 8 s for 40,000 records
    fields = None
    current = None
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        m = _SMART_TAG.match(line)
        if _SMART_RECORD_START.match(line):
            # Any '.I' line starts a record: a malformed one ('.I 2 extra')
            # would otherwise be read as text, and its record lost.
            try:
                ids.append(_document_id(m.group(2)))
            except (AttributeError, TypeError, ValueError):
                raise ValueError(
                    f"{what}: malformed record start {reprlib.repr(line)}; expected '.I <number>' "
                    f"with the number in int64's range") from None
            if ids[-1] in seen_ids:
                raise ValueError(f"{what}: record .I {ids[-1]} appears twice")
            seen_ids.add(ids[-1])
            fields = {}
            records.append(fields)
            current = None
            continue
        if fields is None:
            if line.strip():
                raise ValueError(f"{what}: text {line[:40]!r} before the first '.I' record")
            continue
        if m is not None and m.group(2) is None:
            tag = m.group(1)
            if not (fold_into_abstract and "W" in fields and tag in _SMART_FOLD_AFTER_W):
                # A repeated tag continues its field (CISI lists one .A per
                # author; ADI document 67 repeats its .T).
                current = fields.setdefault(tag, [])
                continue
            current = fields["W"]
            continue
        if current is None:
            if line.strip():
                raise ValueError(
                    f"{what}: text {line[:40]!r} outside any field of record {ids[-1]}")
            continue
        current.append(line.rstrip())
    if not records:
        raise ValueError(f"{what} holds no '.I' record")
    out = []
    for rec in records:
        out.append({tag: "\n".join(lines).strip() for tag, lines in rec.items()})
    return np.array(ids, dtype=np.int64), out


def _check_smart_file_end(text, records, what, source, name):
    """Warn where a documents or queries file looks cut inside its last record.

    The format has no terminator, and a cut there keeps the published number
    of records; but every file of the distributions ends with a line break
    and every record has a text field (``.W``), so a file ending inside a
    line (blanks and a DOS end-of-file mark after its last line break are
    no text), or a last record whose text is missing or empty where every
    other has the field, was likely cut short.
    """
    others = records[:-1]
    if not text.rstrip(" \t\x1a").endswith(("\n", "\r")):
        problem = "ends inside a line (the distribution's files end with a line break)"
    elif others and all("W" in rec for rec in others) and not records[-1].get("W"):
        with_text = sum(1 for rec in others if rec["W"])
        if not with_text:
            return
        problem = (f"ends with a record whose text (.W) is missing or empty, where "
                   f"{with_text:,} of its other {len(others):,} records have text")
    else:
        return
    _warn_incomplete(
        f"{what} in {str(source)!r} {problem}: a file cut short? Extract {name}.tar.gz "
        f"again, or load the archive itself")


def _smart_text(fields):
    return "\n".join(fields[t] for t in ("T", "W") if fields.get(t))


def _parse_qrels(text, fmt, what):
    """Return a list of (query, doc, grade) triples.

    A (query, document) pair judged twice alike is kept once; judged twice
    differently, it is an error: either grade would silently drop the other.
    """
    triples = []
    first_seen = {}  # (query, doc) -> (grade, line number)
    for lineno, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        n_columns, layout = _QRELS_COLUMNS[fmt]
        try:
            if len(parts) != n_columns:
                raise ValueError(line)
            if fmt == "trec":
                q, doc, grade = parts[0], parts[2], parts[3]
            elif fmt == "graded":
                q, doc, grade = parts[0], parts[1], parts[2]
            else:
                q, doc, grade = parts[0], parts[1], "1"
            if not _SIGNED_DECIMAL.match(grade):
                raise ValueError(grade)
            q, doc, grade = _document_id(q), _document_id(doc), int(grade)
        except (IndexError, ValueError):
            raise ValueError(f"{what} line {lineno}: cannot read {line.strip()!r} "
                             f"as a {fmt} relevance judgement ({n_columns} columns: "
                             f"{layout})") from None
        earlier = first_seen.setdefault((q, doc), (grade, lineno))
        if earlier[1] != lineno:
            if earlier[0] != grade:
                raise ValueError(
                    f"{what} line {lineno}: query {q} and document {doc} are judged "
                    f"{grade} here but {earlier[0]} on line {earlier[1]}; expected one "
                    f"judgement per pair")
            continue
        triples.append((q, doc, grade))
    return triples


def _locate_smart(path, name):
    """Return ("tar", archive) or ("dir", folder holding the collection files)."""
    _require_exists(path, f"{name.upper()} collection not found")
    if path.is_file():
        doc_file, query_file, rel_files = _SMART_FILES[name]
        if path.name.lower() in {f.lower() for f in (doc_file, query_file)
                                 + tuple(r[0] for r in rel_files)}:
            _refuse_member_file(path, f"{name.upper()} collection's", path.parent)
        return "tar", path
    if not path.is_dir():
        raise DatasetNotFoundError(
            f"{name.upper()} collection not found: {str(path)!r} is neither a folder nor an "
            f"archive")
    doc_file = _SMART_FILES[name][0]
    # The folder itself, or its ir-classic/ subfolder (the layout the other
    # loaders' folders have: a data folder holding each corpus in its own),
    # or a folder of the collection's name.
    for root in (path, path / "ir-classic", path / name):
        if not root.is_dir():
            continue
        present = {p.name.lower() for p in root.iterdir()}
        if doc_file.lower() in present:
            return "dir", root
        for archive in (f"{name}.tar.gz", f"{name}.tgz", f"{name.upper()}.tar.gz"):
            if (root / archive).is_file():
                return "tar", root / archive
    raise DatasetNotFoundError(
        f"no {name.upper()} collection under {str(path)!r}: expected {doc_file} or "
        f"{name}.tar.gz in it, or in its ir-classic/ or {name}/ subfolder")


def _check_smart_sizes(name, found, source):
    """Warn where a collection's documents, queries or judgements are not
    as many as published."""
    if found != _SMART_SIZES[name]:
        _warn_incomplete(
            f"{str(source)!r} is not the published {name.upper()} collection: "
            + ", ".join(f"{n:,} {what} (published: {m:,})" for n, m, what in zip(
                found, _SMART_SIZES[name], ("documents", "queries", "relevance judgements")))
            + f". A file cut short? Extract {name}.tar.gz again, or load the archive itself")


def load_smart(path, name):
    """Load one of the classic SMART retrieval test collections.

    Parameters
    ----------
    path : str or os.PathLike
        The collection's archive (``adi.tar.gz``, ``cisi.tar.gz``,
        ``cran.tar.gz`` or ``med.tar.gz`` of the Glasgow distribution, flat
        files without a top folder), a folder holding that archive, or a
        folder holding the extracted files; or a folder whose ``ir-classic/``
        or ``<name>/`` subfolder holds either (a data folder such as the
        one 20 Newsgroups and Reuters are found in).
    name : {"adi", "cisi", "cran", "med"}
        The collection (case-insensitive).

    Returns
    -------
    collection : IRCollection
        Documents and queries in file order, with relevance judgements. The
        record format uses ``.I <id>`` to open a record and ``.T`` (title),
        ``.A`` (authors), ``.B`` (source), ``.W`` (abstract or query text),
        ``.X`` (CISI citations) etc. to open fields; CRLF and LF line ends are
        both read. Document and query text is the title and ``.W`` field
        joined by a newline. Relevance files: ``ADI.REL`` and ``CISI.REL``
        list ``query doc 0 0.0``; ``MED.REL`` is TREC style ``query 0 doc 1``
        (``MED.REL.OLD`` is used if it is missing); ``cranqrel`` lists
        ``query doc code`` with the queries renumbered 1..225 in file order,
        so CRAN's ``query_ids`` are 1..225 and ``original_query_ids`` keep the
        ``.I`` numbers of ``cran.qry``. Checked sizes: ADI 82 documents / 35
        queries, CISI 1,460 / 112 (76 judged), CRAN 1,400 / 225, MED 1,033 / 30;
        CRAN documents 471 and 995 are empty records, kept as empty strings.

    Raises
    ------
    DatasetNotFoundError
        If ``path`` does not exist or holds no copy of the collection.
    ValueError
        If ``name`` is unknown, the archive is corrupt or lacks a file, or a
        file is malformed (a relevance line without its columns included).

    Warns
    -----
    IncompleteCorpusWarning
        If the numbers of documents, queries or relevance judgements (the
        distinct (query, document) pairs the relevance file judges, one a
        line in the distributions) are not the published ones: ADI 82 / 35 /
        170, CISI 1,460 / 112 / 3,114, CRAN 1,400 / 225 / 1,837, MED 1,033 /
        30 / 696; or if the documents or queries file looks cut inside its last
        record, which keeps those numbers: it ends inside a line (blanks and
        a DOS end-of-file mark after the last line break aside), or its last
        record's text (``.W``) is missing or empty where every other record
        has the field. A cut at the end of a line of the last text cannot be
        told from a whole file, and a whole file whose last line break was
        removed warns as if cut.
    """
    if not isinstance(name, str) or name.lower() not in _SMART_FILES:
        raise ValueError(f"name must be one of {list(_SMART_FILES)}, got {name!r}")
    name = name.lower()
    path = _as_path(path)
    doc_file, query_file, rel_files = _SMART_FILES[name]
    wanted = {n.lower(): n for n in (doc_file, query_file, *(f for f, _ in rel_files))}
    kind, source = _locate_smart(path, name)
    if kind == "tar":
        def select(member):
            base = member.rsplit("/", 1)[-1].lower()
            return wanted.get(base)
        files, _ = _scan_tar(source, select)
    else:
        files, file_paths = {}, {}
        for p in source.iterdir():
            canonical = wanted.get(p.name.lower())
            if canonical is not None and _is_file(p):
                if canonical in files:
                    if os.path.samefile(file_paths[canonical], p):
                        continue  # adi.all a link to ADI.ALL: one file
                    # ADI.ALL and adi.all: whichever the listing gave last won
                    # (an archive holding both is refused as a document twice).
                    raise ValueError(f"{str(source)!r} holds two {canonical} files, "
                                     f"{file_paths[canonical].name!r} and {p.name!r}: keep one")
                files[canonical], file_paths[canonical] = _read_bytes(p), p
    for required in (doc_file, query_file):
        if required not in files:
            raise ValueError(f"{str(source)!r} has no {required} file for the "
                             f"{name.upper()} collection")
    rel = next(((f, fmt) for f, fmt in rel_files if f in files), None)
    if rel is None:
        raise ValueError(f"{str(source)!r} has no relevance file for the {name.upper()} "
                         f"collection; expected one of {[f for f, _ in rel_files]}")

    doc_text, query_text = _decode(files[doc_file]), _decode(files[query_file])
    doc_ids, doc_fields = _parse_smart_records(doc_text, doc_file, True)
    original_qids, query_fields = _parse_smart_records(query_text, query_file, False)
    for text, records, what in ((doc_text, doc_fields, doc_file),
                                (query_text, query_fields, query_file)):
        _check_smart_file_end(text, records, what, source, name)
    if name == "cran":
        # cranqrel numbers the queries 1..225 in the order of cran.qry, whose
        # own .I numbers skip values (1, 2, 4, 8, 9, ...).
        query_ids = np.arange(1, len(original_qids) + 1, dtype=np.int64)
    else:
        query_ids = original_qids.copy()

    relevance = {}
    triples = _parse_qrels(_decode(files[rel[0]]), rel[1], rel[0])
    if not triples:
        raise ValueError(f"{rel[0]} holds no relevance judgement")
    _check_smart_sizes(name, (len(doc_ids), len(query_ids), len(triples)), source)
    for q, doc, grade in triples:
        relevance.setdefault(q, {})[doc] = grade
    unknown = sorted(set(relevance) - set(query_ids.tolist()))
    if unknown:
        raise ValueError(
            f"{rel[0]} judges queries {unknown[:10]} that {query_file} does not define")
    known_docs = set(doc_ids.tolist())
    unknown = sorted({d for judged in relevance.values() for d in judged} - known_docs)
    if unknown:
        raise ValueError(
            f"{rel[0]} judges documents {unknown[:10]} that {doc_file} does not define")
    qrels = {}
    for q in sorted(relevance):
        relevant = frozenset(d for d, g in relevance[q].items() if g > 0)
        if relevant:
            qrels[q] = relevant
    return IRCollection(
        name=name,
        doc_ids=doc_ids,
        documents=[_smart_text(f) for f in doc_fields],
        doc_fields=doc_fields,
        query_ids=query_ids,
        original_query_ids=original_qids,
        queries=[_smart_text(f) for f in query_fields],
        query_fields=query_fields,
        qrels=qrels,
        relevance=relevance,
    )


# ---------------------------------------------------------------------------
# Downloading
# ---------------------------------------------------------------------------

def get_data_home(data_home=None):
    """Return the folder where ``fetch_*`` functions cache archives, creating it.

    Parameters
    ----------
    data_home : str or os.PathLike or None, default=None
        The folder to use. If None, the environment variable
        ``KGEO_DATA_HOME`` if set, else ``~/kgeo_data``.

    Returns
    -------
    data_home : pathlib.Path
    """
    if data_home is None:
        data_home = os.environ.get("KGEO_DATA_HOME") or Path("~") / "kgeo_data"
    data_home = _as_path(data_home, "data_home")
    if data_home.exists() and not data_home.is_dir():
        raise ValueError(f"data_home must be a folder, but {str(data_home)!r} is a file")
    data_home.mkdir(parents=True, exist_ok=True)
    return data_home


def _check_sha256(sha256):
    if sha256 is None:
        return None
    if not isinstance(sha256, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", sha256):
        raise ValueError(
            f"sha256 must be None or a hex string of 64 characters, got {sha256!r}")
    return sha256.lower()


def _file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_DOWNLOAD_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _download(url, dest, sha256, timeout):
    """Download ``url`` to ``dest`` through a temporary file, checking SHA-256."""
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme not in ("http", "https"):
        raise ValueError(f"url must be an http:// or https:// address, got {url!r}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    # The temporary file lives beside the destination so that os.replace is an
    # atomic rename on the same file system: a reader never sees half a file.
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    logger.info("downloading %s to %s", url, dest)
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as response:
                    announced = response.headers.get("Content-Length")
                    received = 0
                    while True:
                        chunk = response.read(_DOWNLOAD_CHUNK)
                        if not chunk:
                            break
                        received += len(chunk)
                        digest.update(chunk)
                        out.write(chunk)
            except urllib.error.URLError as exc:
                reason = getattr(exc, "reason", exc)
                raise OSError(f"could not download {url}: {reason}") from exc
            except http.client.HTTPException as exc:  # e.g. IncompleteRead
                raise OSError(f"could not download {url}: {exc!r}") from exc
        # urllib does not notice a connection closed early: compare with the
        # length the server announced.
        if announced is not None and announced.isdigit() and received != int(announced):
            raise OSError(
                f"incomplete download of {url}: received {received} of the {announced} "
                f"bytes announced; the partial file was removed")
        got = digest.hexdigest()
        if sha256 is not None and got != sha256:
            raise ValueError(
                f"SHA-256 checksum mismatch for {url}: expected {sha256}, got {got}; "
                f"the partial download was removed")
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dest


def _fetch(data_home, folder, url, default_name, sha256, download_if_missing, timeout):
    """Path of the cached archive (downloaded if needed) and whether it is fresh."""
    if not isinstance(url, str):
        raise TypeError(f"url must be a str, got {type(url).__name__}")
    sha256 = _check_sha256(sha256)
    if (not isinstance(timeout, numbers.Real) or isinstance(timeout, (bool, np.bool_))
            or not 0 < timeout <= _MAX_TIMEOUT):
        raise ValueError(f"timeout must be a number of seconds in (0, {_MAX_TIMEOUT:g}], "
                         f"got {timeout!r}")
    timeout = float(timeout)
    if not isinstance(download_if_missing, (bool, np.bool_)):
        raise TypeError(f"download_if_missing must be True or False, got {download_if_missing!r}")
    path = urllib.parse.urlsplit(url).path
    # ".../dir/" names a folder, and "." or ".." would escape the cache folder.
    name = "" if path.endswith("/") else Path(path).name
    if name in ("", ".", ".."):
        name = default_name
    dest = get_data_home(data_home) / folder / name
    if dest.is_file():
        # Downloads are atomic, so a mismatch here means the file was replaced
        # or came from another address: it is named, not deleted (it may be
        # the user's only copy). Hashing costs far less than the load after it.
        if sha256 is not None:
            got = _file_sha256(dest)
            if got != sha256:
                raise ValueError(
                    f"SHA-256 checksum mismatch for the cached file {str(dest)!r}: expected "
                    f"{sha256}, got {got}; delete it to download it again, or pass "
                    f"sha256=None to use it as it is")
        return dest, False
    if dest.parent.exists() and not dest.parent.is_dir():
        raise ValueError(f"the cache folder {str(dest.parent)!r} is a file; expected a "
                         f"folder (or nothing there)")
    if os.path.lexists(dest):
        # A folder (or a dangling link) where the archive goes: the whole
        # download failed at its final rename (a review).
        raise ValueError(f"{str(dest)!r}, where the downloaded archive goes, is not a file; "
                         f"move it away to download the archive there")
    if not download_if_missing:
        raise DatasetNotFoundError(f"{str(dest)!r} is not cached and download_if_missing=False")
    _download(url, dest, sha256, timeout)
    return dest, True


def _load_fetched(load, archive, fresh, url):
    """``load(archive)``; an archive that does not load is never left in the cache
    silently: a fresh download is removed, a cached one is named for deletion."""
    try:
        return load(archive)
    except ValueError as exc:
        if fresh:
            archive.unlink(missing_ok=True)
            raise ValueError(f"the file downloaded from {url} is not a usable archive, and "
                             f"was removed: {exc}") from exc
        raise ValueError(f"the cached archive {str(archive)!r} is not usable; delete it to "
                         f"download it again: {exc}") from exc


def fetch_20newsgroups(data_home=None, subset="train", *, url=NEWSGROUPS_URL,
                       sha256=NEWSGROUPS_SHA256, download_if_missing=True, timeout=60.0):
    """Load 20 Newsgroups "bydate", downloading the archive if it is not cached.

    Parameters
    ----------
    data_home : str or os.PathLike or None, default=None
        Cache folder; see :func:`get_data_home`. The archive is kept as
        ``<data_home>/20news-bydate/<file name of url>``.
    subset : {"train", "test", "all"}, default="train"
        Passed to :func:`load_20newsgroups`.
    url : str, default=NEWSGROUPS_URL
        Where to download from (http or https).
    sha256 : str or None, default=NEWSGROUPS_SHA256
        Expected SHA-256 of the archive, checked before a download is kept
        and each time a cached archive is used; None skips the check. The
        default is the checksum of the canonical archive.
    download_if_missing : bool, default=True
        If False and the archive is not cached, raise instead of downloading.
    timeout : float, default=60.0
        Socket timeout in seconds for the download.

    Returns
    -------
    corpus : NewsgroupsCorpus

    Raises
    ------
    ValueError
        On a checksum mismatch (the partial file is removed), or a bad argument.
    OSError
        If the download fails.
    DatasetNotFoundError
        If the archive is not cached and ``download_if_missing`` is False.
    """
    subset = _check_choice(subset, _SUBSETS, "subset")
    archive, fresh = _fetch(data_home, "20news-bydate", url, "20news-bydate.tar.gz", sha256,
                            download_if_missing, timeout)
    return _load_fetched(lambda path: load_20newsgroups(path, subset=subset), archive, fresh,
                         url)


def fetch_webkb(data_home=None, classes=("student", "faculty", "course", "project"), *,
                url=WEBKB_URL, sha256=None, download_if_missing=True, timeout=60.0):
    """Load WebKB, downloading the archive if it is not cached.

    Parameters
    ----------
    data_home : str or os.PathLike or None, default=None
        Cache folder; see :func:`get_data_home`. The archive is kept as
        ``<data_home>/webkb/<file name of url>``.
    classes : sequence of str, default=("student", "faculty", "course", "project")
        Passed to :func:`load_webkb`.
    url : str, default=WEBKB_URL
        Where to download from (http or https).
    sha256 : str or None, default=None
        Expected SHA-256 of the archive, checked before a download is kept
        and each time a cached archive is used. None means "verify only if
        given": kgeo ships no reference checksum for this archive, so pass
        one to pin the bytes you expect.
    download_if_missing : bool, default=True
        If False and the archive is not cached, raise instead of downloading.
    timeout : float, default=60.0
        Socket timeout in seconds for the download.

    Returns
    -------
    corpus : WebKBCorpus

    Raises
    ------
    ValueError
        On a checksum mismatch (the partial file is removed), or a bad argument.
    OSError
        If the download fails.
    DatasetNotFoundError
        If the archive is not cached and ``download_if_missing`` is False.
    """
    classes = _check_webkb_classes(classes)  # before any download
    archive, fresh = _fetch(data_home, "webkb", url, "webkb-data.gtar.gz", sha256,
                            download_if_missing, timeout)
    return _load_fetched(lambda path: load_webkb(path, classes=classes), archive, fresh, url)
