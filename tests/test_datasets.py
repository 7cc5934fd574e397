"""Tests for kgeo.datasets: loaders on tiny corpora built here, real-data counts, fetchers.

The fetchers are exercised only against an HTTP server on 127.0.0.1 started by
the test itself; no test contacts another address.
"""

import bz2
import functools
import gzip
import hashlib
import http.server
import io
import lzma
import os
import re
import tarfile
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import kgeo.datasets
from kgeo.datasets import (
    NEWSGROUPS_SHA256,
    DatasetNotFoundError,
    IncompleteCorpusWarning,
    fetch_20newsgroups,
    fetch_webkb,
    get_data_home,
    load_20newsgroups,
    load_reuters21578,
    load_smart,
    load_webkb,
    topics_to_indicator,
)

REPO_ROOT = Path(__file__).resolve().parents[1]

# The corpora built here are far smaller than the published ones, which the
# loaders warn about; the tests of that warning catch it with pytest.warns,
# and the real corpora are loaded with it turned into an error.
pytestmark = pytest.mark.filterwarnings("ignore::kgeo.datasets.IncompleteCorpusWarning")


def _real_data_dir():
    env = os.environ.get("KGEO_DATA")
    root = Path(env) if env else REPO_ROOT.parent / "shared" / "data"
    return root


def _real(relative):
    path = _real_data_dir() / relative
    if not path.exists():
        pytest.skip(f"real corpus {relative} not found under {_real_data_dir()} "
                    f"(set KGEO_DATA to the folder holding it)")
    return path


def _write_tree(root, files):
    """Write {relative path: bytes} under root."""
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content)


def _write_tar(path, files):
    """Write {member name: bytes} into a gzip-compressed tar at path."""
    with tarfile.open(path, "w:gz") as tf:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tf.addfile(info, io.BytesIO(content))
    return path


# ---------------------------------------------------------------------------
# 20 Newsgroups
# ---------------------------------------------------------------------------

NG_FILES = {
    # Ids chosen so that numeric and string order differ (9 < 10).
    "20news-bydate-train/sci.space/10": b"From: a@b\nSubject: orbit\n\nlaunch window\n",
    "20news-bydate-train/sci.space/9": b"From: c@d\r\nSubject: moon\r\n\r\nlunar \xe9t\xe9\r\n",
    "20news-bydate-train/alt.atheism/300": b"From: e@f\n\natheism text\n",
    "20news-bydate-test/alt.atheism/301": b"From: g@h\n\nmore atheism\n",
    "20news-bydate-test/sci.space/11": b"From: i@j\n\nrocket\n",
    # Only in the test split: still numbered among the groups of every subset.
    "20news-bydate-test/comp.graphics/12": b"From: k@l\n\npixels\n",
}


@pytest.fixture
def ng_tar(tmp_path):
    return _write_tar(tmp_path / "20news-bydate.tar.gz", NG_FILES)


@pytest.fixture
def ng_dir(tmp_path):
    root = tmp_path / "extracted"
    _write_tree(root, NG_FILES)
    (root / "20news-bydate-train" / "sci.space" / "README.txt").write_bytes(b"not a message")
    return root


def test_20newsgroups_train_from_archive(ng_tar):
    corpus = load_20newsgroups(ng_tar, subset="train")
    assert corpus.target_names == ["alt.atheism", "comp.graphics", "sci.space"]
    assert corpus.filenames == [
        "20news-bydate-train/alt.atheism/300",
        "20news-bydate-train/sci.space/9",
        "20news-bydate-train/sci.space/10",
    ]
    np.testing.assert_array_equal(corpus.target, [0, 2, 2])
    assert corpus.target.dtype == np.int64
    assert corpus.split.tolist() == ["train"] * 3
    # Latin-1 decoding keeps every byte: CR bytes and the non-UTF-8 \xe9.
    assert corpus.data[1] == "From: c@d\r\nSubject: moon\r\n\r\nlunar \u00e9t\u00e9\r\n"
    assert len(corpus) == 3
    assert "subset='train'" in repr(corpus)


def test_20newsgroups_all_is_train_then_test(ng_tar):
    corpus = load_20newsgroups(ng_tar, subset="all")
    assert corpus.split.tolist() == ["train"] * 3 + ["test"] * 3
    assert corpus.filenames[3:] == [
        "20news-bydate-test/alt.atheism/301",
        "20news-bydate-test/comp.graphics/12",
        "20news-bydate-test/sci.space/11",
    ]
    np.testing.assert_array_equal(corpus.target, [0, 2, 2, 0, 1, 2])


@pytest.mark.parametrize("subset", ["train", "test", "all"])
def test_20newsgroups_folder_equals_archive(ng_tar, ng_dir, subset):
    a = load_20newsgroups(ng_tar, subset=subset)
    b = load_20newsgroups(ng_dir, subset=subset)
    assert a.data == b.data
    assert a.filenames == b.filenames
    assert a.target_names == b.target_names
    np.testing.assert_array_equal(a.target, b.target)


def test_20newsgroups_path_variants(tmp_path):
    # DIR/20news-bydate/20news-bydate.tar.gz, as in the shared data folder.
    (tmp_path / "20news-bydate").mkdir()
    _write_tar(tmp_path / "20news-bydate" / "20news-bydate.tar.gz", NG_FILES)
    expected = load_20newsgroups(tmp_path / "20news-bydate" / "20news-bydate.tar.gz")
    for path in (tmp_path, tmp_path / "20news-bydate", str(tmp_path)):
        assert load_20newsgroups(path).filenames == expected.filenames
    # DIR/20news-bydate/ holding the extracted folders.
    other = tmp_path / "other"
    _write_tree(other / "20news-bydate", NG_FILES)
    assert load_20newsgroups(other).filenames == expected.filenames


def test_20newsgroups_bad_input(tmp_path, ng_tar):
    with pytest.raises(ValueError,
                       match=r"subset must be one of \['train', 'test', 'all'\], got 'dev'"):
        load_20newsgroups(ng_tar, subset="dev")
    missing = tmp_path / "nowhere"
    with pytest.raises(ValueError, match="does not exist"):
        load_20newsgroups(missing)
    with pytest.raises(FileNotFoundError):
        load_20newsgroups(missing)
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetNotFoundError, match="no 20 Newsgroups corpus under"):
        load_20newsgroups(tmp_path / "empty")
    with pytest.raises(TypeError, match="path must be a str or os.PathLike, got int"):
        load_20newsgroups(42)


def test_20newsgroups_corrupted_archives(tmp_path, ng_tar):
    garbage = tmp_path / "garbage.tar.gz"
    garbage.write_bytes(b"this is not an archive at all" * 10)
    with pytest.raises(ValueError, match="is not a readable tar archive"):
        load_20newsgroups(garbage)
    truncated = tmp_path / "truncated.tar.gz"
    truncated.write_bytes(ng_tar.read_bytes()[:150])
    with pytest.raises(ValueError, match="is not a readable tar archive"):
        load_20newsgroups(truncated)
    unrelated = _write_tar(tmp_path / "unrelated.tar.gz", {"docs/readme.txt": b"hello"})
    with pytest.raises(ValueError, match="no 20 Newsgroups message found for subset='train'"):
        load_20newsgroups(unrelated)


def _plain_tar_bytes(files):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tf:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tf.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress, bytes],
                         ids=["gz", "bz2", "xz", "plain"])
def test_20newsgroups_damage_is_an_error_not_a_shorter_corpus(tmp_path, compress):
    # tarfile's stream mode stops quietly at a header it cannot parse after
    # the first member: without the end-of-archive check these loaded as
    # corpora with messages missing.
    tar = _plain_tar_bytes(NG_FILES)
    second_header = 512 + 512 * ((len(NG_FILES["20news-bydate-train/sci.space/10"]) + 511) // 512)
    damaged = bytearray(tar)
    damaged[second_header + 3] ^= 0x55  # inside the second member's name: bad checksum
    at_member_boundary = tar[:second_header]  # no end-of-archive marker
    for name, content in (("damaged", bytes(damaged)), ("cut", at_member_boundary)):
        path = tmp_path / f"{name}.tar"
        path.write_bytes(compress(content))
        with pytest.raises(ValueError, match=r"is not a readable tar archive.*damaged or "
                                             r"truncated: no valid member header"):
            load_20newsgroups(path, subset="all")


@pytest.mark.parametrize("compress", [gzip.compress, bytes], ids=["gz", "plain"])
def test_20newsgroups_zeroed_header_is_an_error_not_a_shorter_corpus(tmp_path, compress):
    # tarfile stops at the first zero block; a header zeroed by damage (a
    # zeroed disk page) used to end the corpus there, without an error.
    tar = _plain_tar_bytes(NG_FILES)
    second_header = 512 + 512 * ((len(NG_FILES["20news-bydate-train/sci.space/10"]) + 511) // 512)
    damaged = bytearray(tar)
    damaged[second_header:second_header + 512] = bytes(512)
    path = tmp_path / "zeroed.tar"
    path.write_bytes(compress(bytes(damaged)))
    with pytest.raises(ValueError, match=r"damaged or truncated: no valid member header and "
                                         r"no end-of-archive marker at byte 1024 .*\(1 members"):
        load_20newsgroups(path, subset="all")
    path.write_bytes(compress(tar))
    assert len(load_20newsgroups(path, subset="all")) == len(NG_FILES)


def test_20newsgroups_gzip_checksum_is_verified(tmp_path):
    # A flipped byte inside a message's text: the tar headers are intact, so
    # only gzip's CRC-32 (checked once the stream is read to its end) sees it.
    tar = _plain_tar_bytes(NG_FILES)
    compressed = bytearray(gzip.compress(tar, compresslevel=0))  # stored: bytes map 1:1
    position = compressed.find(b"launch window")
    compressed[position] ^= 0x01
    path = tmp_path / "flipped.tar.gz"
    path.write_bytes(bytes(compressed))
    with pytest.raises(ValueError, match=r"is not a readable tar archive.*CRC"):
        load_20newsgroups(path)


def test_20newsgroups_archive_links_load_as_in_a_folder(tmp_path):
    # Links used to be skipped in archives (a folder follows them): fewer messages.
    group = "20news-bydate-train/sci.space"
    path = tmp_path / "links.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        info = tarfile.TarInfo(f"{group}/1")
        info.size = 11
        tf.addfile(info, io.BytesIO(b"From: a\n\nxy"))
        hard = tarfile.TarInfo(f"{group}/2")
        hard.type, hard.linkname = tarfile.LNKTYPE, f"{group}/1"
        tf.addfile(hard)
        soft = tarfile.TarInfo(f"{group}/3")
        soft.type, soft.linkname = tarfile.SYMTYPE, "1"
        tf.addfile(soft)
    corpus = load_20newsgroups(path)
    assert corpus.filenames == [f"{group}/{i}" for i in (1, 2, 3)]
    assert corpus.data[0] == corpus.data[1] == corpus.data[2]
    dangling = tmp_path / "dangling.tar.gz"
    with tarfile.open(dangling, "w:gz") as tf:
        soft = tarfile.TarInfo(f"{group}/4")
        soft.type, soft.linkname = tarfile.SYMTYPE, "../elsewhere/9"
        tf.addfile(soft)
    with pytest.raises(ValueError, match=r"member '20news-bydate-train/sci.space/4' is a "
                                         r"symbolic link to '../elsewhere/9', which is not a "
                                         r"regular file of the archive"):
        load_20newsgroups(dangling)


def test_archive_holding_one_document_under_two_folders_is_refused(tmp_path):
    # The member pattern matches at any depth, so a/20news-bydate-train/... and
    # b/20news-bydate-train/... were one key: the second silently replaced the
    # first, and the corpus lost a message.
    path = _write_tar(tmp_path / "two_roots.tar.gz", {
        "a/20news-bydate-train/alt.atheism/1": b"From: a\n\nfirst",
        "b/20news-bydate-train/alt.atheism/1": b"From: b\n\nsecond",
    })
    with pytest.raises(ValueError, match=r"holds the same document twice, as members "
                                         r"'a/20news-bydate-train/alt.atheism/1' and "
                                         r"'b/20news-bydate-train/alt.atheism/1'") as info:
        load_20newsgroups(path)
    # The archive reads; what it holds is refused (it was "not a readable tar
    # archive: ... holds the same document twice", a review).
    assert str(info.value).startswith(repr(str(path)) + " holds the same document twice")


def test_a_member_name_repeated_in_an_archive_reads_as_tar_extracts_it(tmp_path):
    # tar appends a changed file as a new member of the same name; extracting
    # keeps the last. A link may replace a file of its name, and a file a link.
    group = "20news-bydate-train/sci.space"
    path = tmp_path / "appended.tar"
    with tarfile.open(path, "w") as tf:
        for name, content in [(f"{group}/1", b"From: a\n\nold"),
                              (f"{group}/2", b"From: b\n\ntwo"),
                              (f"{group}/1", b"From: a\n\nnew")]:
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tf.addfile(info, io.BytesIO(content))
        link = tarfile.TarInfo(f"{group}/2")
        link.type, link.linkname = tarfile.SYMTYPE, "1"
        tf.addfile(link)
    corpus = load_20newsgroups(path)
    assert corpus.filenames == [f"{group}/1", f"{group}/2"]
    assert corpus.data == ["From: a\n\nnew", "From: a\n\nnew"]
    with tarfile.open(path) as tf:
        tf.extractall(tmp_path / "folder", filter="tar")
    assert load_20newsgroups(tmp_path / "folder").data == corpus.data


def test_20newsgroups_archive_links_to_another_subset_or_later_members(tmp_path):
    # A link whose target the subset does not read (or that comes later in
    # the archive) was refused as "not a file of the corpus read before it";
    # the same files in a folder load.
    members = [
        ("20news-bydate-train/sci.space/1", b"From: a\n\ntrain text", None),
        ("20news-bydate-test/sci.space/2", None, (tarfile.LNKTYPE,
                                                  "20news-bydate-train/sci.space/1")),
        ("20news-bydate-test/sci.space/3", None, (tarfile.SYMTYPE, "4")),
        ("20news-bydate-test/sci.space/4", None, (tarfile.SYMTYPE, "5")),
        ("20news-bydate-test/sci.space/5", b"From: b\n\nlater text", None),
    ]
    path = tmp_path / "links.tar"
    with tarfile.open(path, "w") as tf:
        for name, content, link in members:
            info = tarfile.TarInfo(name)
            if link is None:
                info.size = len(content)
                tf.addfile(info, io.BytesIO(content))
            else:
                info.type, info.linkname = link
                tf.addfile(info)
    test = load_20newsgroups(path, subset="test")
    assert test.filenames == [f"20news-bydate-test/sci.space/{i}" for i in (2, 3, 4, 5)]
    assert test.data == ["From: a\n\ntrain text"] + ["From: b\n\nlater text"] * 3
    everything = load_20newsgroups(path, subset="all")
    assert everything.data[1:] == test.data
    with tarfile.open(path) as tf:
        tf.extractall(tmp_path / "folder", filter="tar")
    assert load_20newsgroups(tmp_path / "folder", subset="test").data == test.data


def test_20newsgroups_archive_and_folder_take_the_same_digits(tmp_path, ng_tar):
    # The archive's pattern took any Unicode digit ("\u0662", Arabic-Indic
    # two) where the folder took ASCII digits only: different corpora.
    files = dict(NG_FILES, **{"20news-bydate-train/sci.space/\u0662": b"From: x\n\ny"})
    _write_tree(tmp_path / "folder", files)
    archive = _write_tar(tmp_path / "odd.tar.gz", files)
    assert (load_20newsgroups(archive).filenames
            == load_20newsgroups(tmp_path / "folder").filenames
            == load_20newsgroups(ng_tar).filenames)


def test_links_to_nothing_in_folders_are_errors_not_skipped(tmp_path, ng_dir, webkb_dir):
    # A dangling link in a folder was skipped silently (is_file() is False),
    # where the same member in an archive is refused: a document lost.
    link = ng_dir / "20news-bydate-train" / "sci.space" / "11"
    link.symlink_to("no-such-message")
    with pytest.raises(ValueError, match=r"sci.space/11' is a symbolic link to "
                                         r"'no-such-message', which does not exist"):
        load_20newsgroups(ng_dir)
    page = next(p for p in sorted(webkb_dir.rglob("*")) if p.is_file())
    (page.parent / "dangling.html").symlink_to(page.parent / "gone.html")
    with pytest.raises(ValueError, match=r"dangling.html' is a symbolic link to .*gone.html"):
        load_webkb(webkb_dir)
    _write_tree(tmp_path / "adi", ADI_FILES)
    (tmp_path / "adi" / "ADI.REL").unlink()
    (tmp_path / "adi" / "ADI.REL").symlink_to("ADI.REL.lost")
    with pytest.raises(ValueError, match=r"ADI.REL' is a symbolic link to 'ADI.REL.lost'"):
        load_smart(tmp_path / "adi", "adi")


def test_20newsgroups_folder_skips_names_of_non_ascii_digits(ng_dir):
    # int("1\u00b2") used to raise; the archive skips such a member.
    (ng_dir / "20news-bydate-train" / "sci.space" / "1\u00b2").write_bytes(b"From: x\n\ny")
    assert len(load_20newsgroups(ng_dir)) == 3


def test_paths_empty_or_of_an_unknown_user_are_refused(tmp_path):
    with pytest.raises(ValueError, match="path must name a file or folder, got an empty path"):
        load_20newsgroups("")  # would load the working directory
    with pytest.raises(ValueError, match=r"path '~no_such_user_kgeo/x': "):
        load_20newsgroups("~no_such_user_kgeo/x")


def test_bytes_paths_are_refused_by_name(tmp_path):
    with pytest.raises(TypeError, match="path must be a str or os.PathLike, got bytes"):
        load_20newsgroups(os.fsencode(tmp_path))


def test_20newsgroups_folder_missing_split(tmp_path):
    _write_tree(tmp_path, {k: v for k, v in NG_FILES.items() if "-train/" in k})
    assert len(load_20newsgroups(tmp_path, subset="train")) == 3
    with pytest.raises(DatasetNotFoundError, match="20news-bydate-test.*needed for subset='test'"):
        load_20newsgroups(tmp_path, subset="test")


# ---------------------------------------------------------------------------
# WebKB
# ---------------------------------------------------------------------------

def test_20newsgroups_archive_skips_members_outside_the_bydate_layout(tmp_path, ng_tar):
    # A folder skips these names (not all digits, or not under 20news-bydate-*/):
    # the archive must too, not read "12.orig" as message 12.
    files = dict(NG_FILES, **{
        "20news-bydate-train/sci.space/12.orig": b"From: x@y\n\nbackup copy\n",
        "old-20news-bydate-train/sci.space/13": b"From: x@y\n\nold copy\n",
    })
    archive = _write_tar(tmp_path / "extra.tar.gz", files)
    for subset in ("train", "all"):
        got = load_20newsgroups(archive, subset=subset)
        expected = load_20newsgroups(ng_tar, subset=subset)
        assert got.filenames == expected.filenames
        assert got.data == expected.data


def test_20newsgroups_folder_skips_files_beside_the_group_folders(ng_dir):
    expected = load_20newsgroups(ng_dir, subset="all")
    (ng_dir / "20news-bydate-train" / "README").write_bytes(b"not a group")
    got = load_20newsgroups(ng_dir, subset="all")
    assert got.filenames == expected.filenames
    assert got.target_names == expected.target_names


@pytest.mark.parametrize("name", ["20news-bydate.tgz", "20news-bydate.tar"])
def test_20newsgroups_folder_holding_an_archive_of_another_name(tmp_path, ng_tar, name):
    holder = tmp_path / "holder"
    holder.mkdir()
    (holder / name).write_bytes(ng_tar.read_bytes())
    assert load_20newsgroups(holder).filenames == load_20newsgroups(ng_tar).filenames


def _page(title):
    return (b"MIME-Version: 1.0\r\nServer: CERN/3.0\r\nContent-Type: text/html\r\n\r\n"
            b"<html><title>" + title + b"</title><body>caf\xe9</body></html>\n")


WEBKB_FILES = {
    "webkb/student/cornell/http:^^www.cs.cornell.edu^~ann^": _page(b"Ann"),
    "webkb/student/texas/http:^^www.cs.utexas.edu^users^bob^\r": _page(b"Bob"),
    "webkb/student/misc/http:^^www.cs.misc.edu^~cy^": _page(b"Cy"),
    "webkb/faculty/washington/http:^^www.cs.washington.edu^homes^dee^": _page(b"Dee"),
    "webkb/faculty/wisconsin/http:^^www.cs.wisc.edu^~eve^": _page(b"Eve"),
    "webkb/course/cornell/http:^^www.cs.cornell.edu^Info^CS100^": _page(b"CS100"),
    "webkb/project/wisconsin/http:^^www.cs.wisc.edu^condor^": _page(b"Condor"),
    "webkb/other/texas/http:^^www.cs.utexas.edu^misc^": _page(b"Other"),
    "webkb/staff/cornell/http:^^www.cs.cornell.edu^staff^": _page(b"Staff"),
}


@pytest.fixture
def webkb_tar(tmp_path):
    return _write_tar(tmp_path / "webkb-data.gtar.gz", WEBKB_FILES)


@pytest.fixture
def webkb_dir(tmp_path):
    _write_tree(tmp_path / "tree", WEBKB_FILES)
    return tmp_path / "tree"


def test_webkb_from_archive(webkb_tar):
    corpus = load_webkb(webkb_tar)
    assert corpus.target_names == ["student", "faculty", "course", "project"]
    assert corpus.filenames == [
        "student/cornell/http:^^www.cs.cornell.edu^~ann^",
        "student/misc/http:^^www.cs.misc.edu^~cy^",
        "student/texas/http:^^www.cs.utexas.edu^users^bob^\r",
        "faculty/washington/http:^^www.cs.washington.edu^homes^dee^",
        "faculty/wisconsin/http:^^www.cs.wisc.edu^~eve^",
        "course/cornell/http:^^www.cs.cornell.edu^Info^CS100^",
        "project/wisconsin/http:^^www.cs.wisc.edu^condor^",
    ]
    np.testing.assert_array_equal(corpus.target, [0, 0, 0, 1, 1, 2, 3])
    assert corpus.universities.tolist() == [
        "cornell", "misc", "texas", "washington", "wisconsin", "cornell", "wisconsin"]
    assert corpus.data[0].startswith("MIME-Version: 1.0\r\n")
    assert corpus.data[0].endswith("caf\u00e9</body></html>\n")


def test_webkb_leave_one_university_out(webkb_tar):
    corpus = load_webkb(webkb_tar)
    assert corpus.held_out == ["cornell", "texas", "washington", "wisconsin"]
    assert len(corpus.splits) == 4
    n = len(corpus)
    for university, (train, test) in zip(corpus.held_out, corpus.splits, strict=True):
        assert np.intersect1d(train, test).size == 0
        np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(n))
        assert set(corpus.universities[test]) == {university}
        assert university not in set(corpus.universities[train])
        # misc pages are always training pages.
        assert 1 in train
    np.testing.assert_array_equal(corpus.splits[0][1], [0, 5])  # cornell


def test_webkb_folder_keeps_carriage_return_names(webkb_tar, webkb_dir):
    from_dir = load_webkb(webkb_dir)
    assert any(name.endswith("^\r") for name in from_dir.filenames)
    from_tar = load_webkb(webkb_tar)
    assert from_dir.filenames == from_tar.filenames
    assert from_dir.data == from_tar.data
    # The tree's root is "webkb/": its parent, the folder itself, and a folder
    # holding webkb/webkb-data.gtar.gz all work.
    assert load_webkb(webkb_dir / "webkb").filenames == from_tar.filenames
    holder = webkb_tar.parent / "holder"
    (holder / "webkb").mkdir(parents=True)
    (holder / "webkb" / "webkb-data.gtar.gz").write_bytes(webkb_tar.read_bytes())
    assert load_webkb(holder).filenames == from_tar.filenames


def test_webkb_class_selection(webkb_tar):
    corpus = load_webkb(webkb_tar, classes=["staff", "other"])
    assert corpus.target_names == ["staff", "other"]
    assert [f.split("/")[0] for f in corpus.filenames] == ["staff", "other"]
    np.testing.assert_array_equal(corpus.target, [0, 1])


@pytest.mark.parametrize("source", ["archive", "folder"])
def test_webkb_class_without_pages_is_reported(tmp_path, webkb_tar, source):
    # A class asked for that the copy does not hold kept its place in
    # target_names with no page, without a word (a review).
    path = webkb_tar
    if source == "folder":
        _write_tree(tmp_path / "tree", WEBKB_FILES)
        path = tmp_path / "tree"
    with pytest.warns(IncompleteCorpusWarning,
                      match=r"holds no page of the WebKB classes \['department'\]"):
        corpus = load_webkb(path, classes=["staff", "department", "other"])
    assert corpus.target_names == ["staff", "department", "other"]
    np.testing.assert_array_equal(corpus.target, [0, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error", IncompleteCorpusWarning)
        load_webkb(path, classes=["staff", "other"])


def test_webkb_folders_of_unknown_universities_are_reported(tmp_path):
    _write_tree(tmp_path / "tree", dict(WEBKB_FILES, **{
        "webkb/student/mit/http:^^www.mit.edu^~zed^": _page(b"Zed")}))
    with pytest.warns(UserWarning, match=r"holds folders \['mit'\] that are not among the "
                                         r"universities .*; their pages are not loaded"):
        corpus = load_webkb(tmp_path / "tree")
    assert len(corpus) == 7


def test_webkb_archive_reports_unknown_universities_like_a_folder(tmp_path):
    files = dict(WEBKB_FILES, **{"webkb/student/mit/http:^^www.mit.edu^~zed^": _page(b"Zed")})
    archive = _write_tar(tmp_path / "webkb-data.gtar.gz", files)
    with pytest.warns(UserWarning, match=r"student/ holds folders \['mit'\] that are not "
                                         r"among the universities"):
        corpus = load_webkb(archive)
    assert len(corpus) == 7


def test_webkb_unknown_universities_reported_only_for_selected_class_folders(tmp_path):
    # "department" is not loaded, and a file (not a folder) beside the
    # university folders is no university: neither is reported.
    files = dict(WEBKB_FILES, **{
        "webkb/department/mit/http:^^www.mit.edu^": _page(b"MIT"),
        "webkb/student/README": b"notes",
    })
    archive = _write_tar(tmp_path / "webkb-data.gtar.gz", files)
    _write_tree(tmp_path / "tree", files)
    for path in (archive, tmp_path / "tree"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            corpus = load_webkb(path)
        assert len(corpus) == 7


def test_webkb_archive_skips_pages_in_subfolders_like_a_folder(tmp_path, webkb_tar):
    files = dict(WEBKB_FILES, **{"webkb/student/cornell/sub/http:^^deeper^": _page(b"Deep")})
    archive = _write_tar(tmp_path / "deep.gtar.gz", files)
    _write_tree(tmp_path / "tree", files)
    expected = load_webkb(webkb_tar).filenames
    assert load_webkb(archive).filenames == expected
    assert load_webkb(tmp_path / "tree").filenames == expected


@pytest.mark.parametrize("name", ["webkb-data.tar.gz", "webkb-data.tgz"])
def test_webkb_folder_holding_an_archive_of_another_name(tmp_path, webkb_tar, name):
    holder = tmp_path / "holder"
    holder.mkdir()
    (holder / name).write_bytes(webkb_tar.read_bytes())
    assert load_webkb(holder).filenames == load_webkb(webkb_tar).filenames


def test_20newsgroups_empty_group_folder_is_no_class(tmp_path, ng_dir):
    # As in the archive, where an empty folder leaves no member.
    (ng_dir / "20news-bydate-train" / "talk.empty").mkdir()
    assert "talk.empty" not in load_20newsgroups(ng_dir, subset="all").target_names


def test_webkb_bad_input(webkb_tar, tmp_path):
    with pytest.raises(ValueError, match=r"unknown WebKB classes \['students'\]"):
        load_webkb(webkb_tar, classes=("students",))
    with pytest.raises(ValueError, match="must not repeat"):
        load_webkb(webkb_tar, classes=("course", "course"))
    with pytest.raises(ValueError, match="at least one WebKB class"):
        load_webkb(webkb_tar, classes=())
    with pytest.raises(TypeError, match="single string 'course'"):
        load_webkb(webkb_tar, classes="course")
    # A set's order, hence the class numbers, changes with the hash seed.
    with pytest.raises(TypeError, match="classes must be an ordered sequence such as a list, "
                                        "got a frozenset"):
        load_webkb(webkb_tar, classes=frozenset({"course", "student"}))
    with pytest.raises(ValueError, match="does not exist"):
        load_webkb(tmp_path / "missing.gtar.gz")
    with pytest.raises(ValueError, match="no WebKB page of classes"):
        load_webkb(webkb_tar, classes=("department",))


# ---------------------------------------------------------------------------
# Reuters-21578
# ---------------------------------------------------------------------------

def _story(newid, split, topics, title=None, body=None, topics_flag="YES", text_type=None,
           raw_text=None):
    d = "".join(f"<D>{t}</D>" for t in topics)
    if raw_text is None:
        parts = [f"<TITLE>{title}</TITLE>"] if title is not None else []
        if body is not None:
            parts.append(f"<DATELINE>    CITY, Mar 1 - </DATELINE><BODY>{body}</BODY>")
        raw_text = "&#2;\n" + "\n".join(parts)
    attr = f' TYPE="{text_type}"' if text_type else ""
    return (f'<REUTERS TOPICS="{topics_flag}" LEWISSPLIT="{split}" CGISPLIT="TRAINING-SET" '
            f'OLDID="{9000 + newid}" NEWID="{newid}">\n<DATE> 1-MAR-1987</DATE>\n'
            f"<TOPICS>{d}</TOPICS>\n<PLACES></PLACES>\n<UNKNOWN> \n&#5;&#5;&#5;C T\n</UNKNOWN>\n"
            f"<TEXT{attr}>{raw_text}</TEXT>\n</REUTERS>\n")


def _reuters_files():
    first = "".join([
        '<!DOCTYPE lewis SYSTEM "lewis.dtd">\n',
        _story(1, "TRAIN", ["earn"], "EARN ONE",
               "Profit &lt;up&gt; 5 pct &amp; more\n Reuter\n&#3;"),
        _story(2, "TRAIN", ["acq", "earn"], "ACQ AND EARN", "Bought a firm"),
        _story(3, "TEST", ["earn"], "TEST EARN", "Quarterly net"),
        _story(4, "TEST", ["acq"], "TEST ACQ", "Takeover bid M\xfcnchen"),
        _story(5, "TRAIN", ["grain"], "GRAIN", "Wheat harvest"),
        _story(6, "TRAIN", ["earn"], "NOT TOPICS", "excluded", topics_flag="NO"),
    ])
    second = "".join([
        _story(7, "NOT-USED", ["earn"], "UNUSED", "excluded too"),
        _story(8, "TEST", [], "NO TOPIC", "no category at all"),
        _story(9, "TEST", ["trade", "trade"], "TWICE", "trade listed twice"),
        _story(10, "TRAIN", ["trade"], "TRADE", "Trade surplus"),
        _story(11, "TRAIN", ["earn"], text_type="UNPROC",
               raw_text="&#2;\nUNPROCESSED STORY <B>bold</B> text\n&#3;"),
        _story(12, "TRAIN", ["acq"], "BRIEF ACQ ONLY", text_type="BRIEF"),
    ])
    return {"reut2-000.sgm": first.encode("latin-1"), "reut2-001.sgm": second.encode("latin-1")}


@pytest.fixture
def reuters_tar(tmp_path):
    files = {f"reuters21578/{k}": v for k, v in _reuters_files().items()}
    files["reuters21578/README.txt"] = b"readme"
    return _write_tar(tmp_path / "reuters21578.tar.gz", files)


@pytest.fixture
def reuters_dir(tmp_path):
    _write_tree(tmp_path / "folder", _reuters_files())
    return tmp_path / "folder"


def test_reuters_modapte_view(reuters_tar):
    train = load_reuters21578(reuters_tar, subset="train")
    test = load_reuters21578(reuters_tar, subset="test")
    assert train.newids.tolist() == [1, 2, 5, 10, 11, 12]
    assert test.newids.tolist() == [3, 4, 8, 9]
    assert train.category_names == test.category_names == ["acq", "earn", "grain", "trade"]
    assert train.target is None
    assert train.topics == [["earn"], ["acq", "earn"], ["grain"], ["trade"], ["earn"], ["acq"]]
    assert test.topics == [["earn"], ["acq"], [], ["trade"]]  # "trade" listed twice -> once
    assert train.filenames == ["reut2-000.sgm"] * 3 + ["reut2-001.sgm"] * 3
    # Entities decoded, control characters (&#2; &#3;) dropped, title + body.
    assert train.data[0] == "EARN ONE\nProfit <up> 5 pct & more\n Reuter"
    assert test.data[1] == "TEST ACQ\nTakeover bid M\u00fcnchen"
    assert train.data[4] == "UNPROCESSED STORY  bold  text"  # TYPE="UNPROC": the whole TEXT
    assert train.data[5] == "BRIEF ACQ ONLY"  # TYPE="BRIEF": the title alone
    everything = load_reuters21578(reuters_tar, subset="all")
    assert everything.newids.tolist() == [1, 2, 3, 4, 5, 8, 9, 10, 11, 12]
    assert everything.split.tolist() == [
        "train", "train", "test", "test", "train", "test", "test", "train", "train", "train"]


def test_reuters_r90_view(reuters_tar):
    train = load_reuters21578(reuters_tar, subset="train", view="r90")
    test = load_reuters21578(reuters_tar, subset="test", view="r90")
    # grain has no test story: not one of the categories; story 5 goes with it.
    assert train.category_names == ["acq", "earn", "trade"]
    assert train.newids.tolist() == [1, 2, 10, 11, 12]
    assert test.newids.tolist() == [3, 4, 9]
    Y = train.indicator_matrix()
    assert sp.issparse(Y) and Y.format == "csr" and Y.dtype == np.int8
    np.testing.assert_array_equal(
        Y.toarray(), [[0, 1, 0], [1, 1, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(test.indicator_matrix(sparse=False),
                                  [[0, 1, 0], [1, 0, 0], [0, 0, 1]])


def test_reuters_r8_view(reuters_tar, reuters_dir):
    train = load_reuters21578(reuters_tar, subset="train", view="r8")
    test = load_reuters21578(reuters_dir, subset="test", view="r8")
    # Single-label stories only; trade's only test story lists it twice, so
    # trade (like grain) lacks a test story and drops out.
    assert train.category_names == test.category_names == ["acq", "earn"]
    assert train.newids.tolist() == [1, 11, 12]
    np.testing.assert_array_equal(train.target, [1, 1, 0])
    assert test.newids.tolist() == [3, 4]
    np.testing.assert_array_equal(test.target, [1, 0])
    assert train.target_names == ["acq", "earn"]


def test_reuters_folder_equals_archive(reuters_tar, reuters_dir, tmp_path):
    a = load_reuters21578(reuters_tar, subset="all")
    b = load_reuters21578(reuters_dir, subset="all")
    assert a.data == b.data and a.topics == b.topics
    # A folder holding reuters21578/ with the .sgm files also works.
    holder = tmp_path / "holder"
    _write_tree(holder / "reuters21578", _reuters_files())
    assert load_reuters21578(holder, subset="all").data == a.data


def test_reuters_bad_input(reuters_tar, tmp_path):
    with pytest.raises(ValueError,
                       match=r"view must be one of \['modapte', 'r90', 'r8'\], got 'r10'"):
        load_reuters21578(reuters_tar, view="r10")
    with pytest.raises(ValueError, match="subset must be one of"):
        load_reuters21578(reuters_tar, subset="validation")
    with pytest.raises(ValueError, match="does not exist"):
        load_reuters21578(tmp_path / "absent")
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(reuters_tar.read_bytes()[:-200])
    with pytest.raises(ValueError, match="is not a readable tar archive"):
        load_reuters21578(broken)
    empty = _write_tar(tmp_path / "empty.tar.gz", {"reuters21578/README.txt": b"x"})
    with pytest.raises(ValueError, match=r"no reut2-NNN.sgm file found"):
        load_reuters21578(empty)
    _write_tree(tmp_path / "train_only", {"reut2-000.sgm": _story(
        1, "TRAIN", ["earn"], "EARN", "profit").encode()})
    for view in ("modapte", "r90", "r8"):
        # Used to return a corpus of no documents and no categories.
        with pytest.raises(ValueError, match=rf"no Reuters-21578 story of view='{view}' in "
                                             rf"subset='test'"):
            load_reuters21578(tmp_path / "train_only", subset="test", view=view)


@pytest.mark.parametrize("damage, match", [
    (lambda f: {**f, "reut2-001.sgm": b"just some text, no markup"},
     r"reut2-001.sgm holds no <REUTERS> element: not a Reuters-21578 SGML file"),
    (lambda f: {**f, "reut2-000.sgm": f["reut2-000.sgm"].replace(b"</REUTERS>", b"", 1)},
     r"reut2-000.sgm: the <REUTERS> element with attributes .*'NEWID': '1'.* is not closed "
     r"before the next <REUTERS>"),
    # Every </REUTERS> gone: refused in one pass (a lazy match from each
    # open tag to the file's end took 6 s a file: a review).
    (lambda f: {**f, "reut2-000.sgm": f["reut2-000.sgm"].replace(b"</REUTERS>", b"")},
     r"reut2-000.sgm: the <REUTERS> element with attributes .*'NEWID': '1'.* is not closed "
     r"before the next <REUTERS>"),
    (lambda f: {**f, "reut2-001.sgm": f["reut2-001.sgm"] + _story(3, "TEST", ["earn"], "AGAIN",
                                                                  "x").encode()},
     r"reut2-001.sgm: NEWID 3 appears twice \(first in reut2-000.sgm\)"),
    (lambda f: {**f, "reut2-001.sgm": f["reut2-001.sgm"].rstrip(b"\n")[:-len(b"</REUTERS>")]},
     r"reut2-001.sgm: 6 <REUTERS> elements open but 5 are closed by </REUTERS>"),
    # A last open tag without its ">": closed as far as the one-pass check
    # sees, but no element the parser reads (dropped silently without the
    # count at the end: a mutation review).
    (lambda f: {**f, "reut2-001.sgm": f["reut2-001.sgm"] + b'<REUTERS NEWID="99"\n</REUTERS>\n'},
     r"reut2-001.sgm: 7 <REUTERS> elements open but 6 are closed by </REUTERS>"),
    # Unclosed inner elements used to read as no topics, a title without its
    # body, or an empty story.
    (lambda f: {**f, "reut2-000.sgm": f["reut2-000.sgm"].replace(b"</TOPICS>", b"", 1)},
     r"reut2-000.sgm: .*'NEWID': '1'.* has <TOPICS> elements not closed by </TOPICS>"),
    (lambda f: {**f, "reut2-000.sgm": f["reut2-000.sgm"].replace(b"</BODY>", b"", 1)},
     r"reut2-000.sgm: .*'NEWID': '1'.* has <BODY> elements not closed by </BODY>"),
    (lambda f: {**f, "reut2-001.sgm": f["reut2-001.sgm"].replace(b"</TEXT>", b"", 1)},
     r"reut2-001.sgm: .*'NEWID': '7'.* has <TEXT> elements not closed by </TEXT>"),
    # Used to raise a bare OverflowError from NumPy.
    (lambda f: {**f, "reut2-001.sgm": f["reut2-001.sgm"] + _story(
        10**20, "TEST", ["earn"], "HUGE", "x").encode()},
     r"reut2-001.sgm: <REUTERS> element without an integer NEWID attribute in int64's range "
     r"\(attributes .*'NEWID': '100000000000000000000'"),
    (lambda f: {**f, "reut2-001.sgm": f["reut2-001.sgm"].replace(b' NEWID="12"', b"")},
     r"reut2-001.sgm: <REUTERS> element without an integer NEWID attribute in int64's range"),
    (lambda f: {**f, "reut2-000.sgm": f["reut2-000.sgm"].replace(b"</TITLE>", b"", 1)},
     r"reut2-000.sgm: .*'NEWID': '1'.* has <TITLE> elements not closed by </TITLE>"),
    # int() alone read these as 12 and 3: a damaged id loaded as another story's.
    (lambda f: {**f, "reut2-001.sgm": f["reut2-001.sgm"].replace(b' NEWID="12"',
                                                                 b' NEWID="1_2"')},
     r"reut2-001.sgm: <REUTERS> element without an integer NEWID .*'NEWID': '1_2'"),
    (lambda f: {**f, "reut2-001.sgm": f["reut2-001.sgm"].replace(b' NEWID="12"',
                                                                 b' NEWID="+3"')},
     r"reut2-001.sgm: <REUTERS> element without an integer NEWID .*'NEWID': '\+3'"),
], ids=["no-story", "unclosed", "none-closed", "duplicate-newid", "last-unclosed",
        "last-open-tag-unclosed", "unclosed-topics",
        "unclosed-body", "unclosed-text", "newid-beyond-int64", "newid-missing",
        "unclosed-title", "newid-underscore", "newid-sign"])
def test_reuters_damaged_files_are_refused(tmp_path, damage, match):
    # Each used to load: an empty file list entry, two stories merged into one,
    # a story counted twice.
    _write_tree(tmp_path / "folder", damage(_reuters_files()))
    with pytest.raises(ValueError, match=match):
        load_reuters21578(tmp_path / "folder")


def test_reuters_stray_closing_tags_between_stories_are_ignored(tmp_path):
    """A </REUTERS> outside any element closes nothing: the stories load as
    without it (the one-pass check of the closing tags skips it too)."""
    files = _reuters_files()
    _write_tree(tmp_path / "clean", files)
    stray = {name: b"</REUTERS>\n" + text.replace(b"</REUTERS>\n", b"</REUTERS>\n</REUTERS>\n")
             for name, text in files.items()}
    _write_tree(tmp_path / "stray", stray)
    clean = load_reuters21578(tmp_path / "clean", subset="all")
    got = load_reuters21578(tmp_path / "stray", subset="all")
    assert got.data == clean.data and got.topics == clean.topics


def test_reuters_titles_and_topics_are_stripped_and_quot_decoded(tmp_path):
    _write_tree(tmp_path / "folder", {"reut2-000.sgm": "".join([
        _story(1, "TRAIN", [" earn "], "  SAYS &quot;NO&quot;  ", "Body"),
        _story(2, "TEST", ["earn"], "T", "B")]).encode("latin-1")})
    corpus = load_reuters21578(tmp_path / "folder", subset="all")
    assert corpus.data == ['SAYS "NO"\nBody', "T\nB"]
    assert corpus.topics == [["earn"], ["earn"]]
    assert corpus.category_names == ["earn"]


def test_reuters_topics_keep_file_order_and_attributes_may_have_blanks(tmp_path):
    story = _story(1, "TRAIN", ["earn", "acq", "earn"], "T", "B")
    # SGML allows blanks around "=" in attributes.
    story = story.replace('LEWISSPLIT="TRAIN"', 'LEWISSPLIT = "TRAIN"').replace(
        'NEWID="1"', 'NEWID= "1"')
    _write_tree(tmp_path / "folder", {"reut2-000.sgm": story.encode("latin-1")})
    corpus = load_reuters21578(tmp_path / "folder")
    assert corpus.newids.tolist() == [1]
    assert corpus.topics == [["earn", "acq"]]
    assert corpus.category_names == ["acq", "earn"]


def test_reuters_skips_files_not_named_reut2_nnn(tmp_path, reuters_dir):
    # Only reut2-NNN.sgm (three digits), in a folder as in an archive.
    expected = load_reuters21578(reuters_dir, subset="all").newids.tolist()
    stray = {"reut2-21.sgm": _story(50, "TRAIN", ["earn"], "STRAY", "x").encode()}
    _write_tree(reuters_dir, stray)
    archive = _write_tar(tmp_path / "r.tar.gz", dict(_reuters_files(), **stray))
    for path in (reuters_dir, archive):
        assert load_reuters21578(path, subset="all").newids.tolist() == expected


def _r8_stories(spec):
    """Single-label stories: {category: (n_train, n_test)}, in the order given."""
    stories, newid = [], 0
    for category, (n_train, n_test) in spec.items():
        for split, n in (("TRAIN", n_train), ("TEST", n_test)):
            for _ in range(n):
                newid += 1
                stories.append(_story(newid, split, [category], category.upper(), "x"))
    return {"reut2-000.sgm": "".join(stories).encode("latin-1")}


def test_reuters_r8_ranks_r10_by_training_stories_then_name(tmp_path):
    names = [f"c{i:02d}" for i in range(11)]
    # Eleven categories tied on training stories: R10 is the first ten by
    # name, whatever the file order (c10 comes first in the file).
    tied = {"c10": (1, 1), **{c: (1, 1) for c in names[:10]}}
    _write_tree(tmp_path / "tied", _r8_stories(tied))
    corpus = load_reuters21578(tmp_path / "tied", subset="all", view="r8")
    assert corpus.category_names == names[:10]
    # Only training stories count: c10's five test stories do not lift it
    # above c09 (two training stories each for c00..c09, one for c10).
    skewed = {**{c: (2, 1) for c in names[:10]}, "c10": (1, 5)}
    _write_tree(tmp_path / "skewed", _r8_stories(skewed))
    corpus = load_reuters21578(tmp_path / "skewed", subset="all", view="r8")
    assert corpus.category_names == names[:10]
    assert len(corpus) == 30


def test_reuters_references_beyond_unicode_are_dropped(tmp_path):
    # 5,000 digits used to raise the interpreter's limit on int() (4,300 digits);
    # leading zeros do not make a code larger.
    files = _reuters_files()
    files["reut2-001.sgm"] += _story(20, "TRAIN", ["earn"], "LONG",
                                     "a&#" + "9" * 5000 + ";b&#" + "0" * 20 + "65;c").encode()
    _write_tree(tmp_path / "folder", files)
    corpus = load_reuters21578(tmp_path / "folder")
    assert corpus.data[list(corpus.newids).index(20)] == "LONG\nabAc"


@pytest.mark.parametrize("body, text", [
    # Tab, newline and carriage return are whitespace in the text: dropping
    # them would join two words into one.
    ("one&#9;two&#10;three&#13;four", "one\ttwo\nthree\rfour"),
    # Other controls are the wire service's framing: DEL (127) and C1 (up to
    # 159) dropped, a no-break space (160) kept.
    ("a&#127;b&#159;c&#160;d&#31;e", "abc\xa0de"),
])
def test_reuters_control_character_references(tmp_path, body, text):
    files = _reuters_files()
    files["reut2-001.sgm"] += _story(20, "TRAIN", ["earn"], "CONTROLS", body).encode()
    _write_tree(tmp_path / "folder", files)
    corpus = load_reuters21578(tmp_path / "folder")
    assert corpus.data[list(corpus.newids).index(20)] == "CONTROLS\n" + text


def test_reuters_folder_reads_the_files_the_archive_reads(tmp_path):
    """Only ``reut2-NNN.sgm``: a stray ``reut2-backup.sgm`` beside the corpus
    (here a copy of its first file) is no part of it, in a folder as in an
    archive."""
    files = _reuters_files()
    files["reut2-backup.sgm"] = files["reut2-000.sgm"]
    _write_tree(tmp_path / "folder", files)
    archive = _write_tar(tmp_path / "reuters21578.tar.gz", files)
    from_folder = load_reuters21578(tmp_path / "folder", subset="all")
    from_archive = load_reuters21578(archive, subset="all")
    assert from_folder.newids.tolist() == from_archive.newids.tolist()
    assert set(from_folder.filenames) == {"reut2-000.sgm", "reut2-001.sgm"}


def test_reuters_surrogate_references_are_dropped(tmp_path):
    files = _reuters_files()
    files["reut2-001.sgm"] += _story(20, "TRAIN", ["earn"], "SURROGATE", "a&#55296;b").encode()
    _write_tree(tmp_path / "folder", files)
    corpus = load_reuters21578(tmp_path / "folder")
    text = corpus.data[list(corpus.newids).index(20)]
    assert "SURROGATE\nab" == text
    text.encode("utf-8")  # a lone surrogate could not be encoded


def test_reuters_numeric_references_up_to_the_last_code_point_are_characters(tmp_path):
    # Seven digits reach U+10FFFF; longer ones (leading zeros aside) and
    # anything above it are no character: dropped, never an error.
    body = "a&#1000000;b&#0001114111;c&#1114112;d&#" + "9" * 5000 + ";e"
    files = _reuters_files()
    files["reut2-001.sgm"] += _story(20, "TRAIN", ["earn"], "PLANES", body).encode()
    _write_tree(tmp_path / "folder", files)
    corpus = load_reuters21578(tmp_path / "folder")
    text = corpus.data[list(corpus.newids).index(20)]
    assert text == f"PLANES\na{chr(1_000_000)}b{chr(0x10FFFF)}cde"


@pytest.mark.parametrize("topics, match", [
    (None, r"topics must be a sequence of label lists, got NoneType"),
    (5, r"topics must be a sequence of label lists, got int"),
    ([["a"], 3], r"topics must be a sequence of label lists \(or of single str labels\)"),
    ([[None], ["a"]], r"topic labels must be str, got None in document 0"),
    # A bytes label is named, not read as its codes ("got 101").
    ([["a"], b"earn"], r"topic labels must be str, got b'earn' in document 1"),
    ([[bytearray(b"earn")]], r"topic labels must be str, got bytearray\(b'earn'\) in document 0"),
    # ... bare, where the branch keeping it whole is taken ([[...]] never reached it).
    ([bytearray(b"earn")], r"topic labels must be str, got bytearray\(b'earn'\) in document 0"),
])
def test_topics_to_indicator_bad_input(topics, match):
    with pytest.raises(TypeError, match=match):
        topics_to_indicator(topics)


def test_topics_to_indicator_refuses_frames_and_sets():
    class Frame:  # iterating over a pandas DataFrame gives its column names
        columns = ["topics"]

        def __iter__(self):
            return iter(self.columns)

    with pytest.raises(TypeError, match=r"got a data frame \(Frame\); pass its column"):
        topics_to_indicator(Frame())
    with pytest.raises(TypeError, match=r"topics must be an ordered sequence such as a list, "
                                        r"got a set"):
        topics_to_indicator({"earn", "acq"})


@pytest.mark.parametrize("names, match", [
    # "earn" used to give the columns 'e', 'a', 'r', 'n'.
    ("earn", r"category_names must be a sequence of str or None, got 'earn'"),
    (5, r"category_names must be a sequence of str or None, got 5"),
    ([["earn"]], r"category_names must hold str, got \['earn'\]"),
    ({"earn", "acq"}, r"category_names must be an ordered sequence such as a list, got a set"),
])
def test_topics_to_indicator_bad_category_names(names, match):
    with pytest.raises(TypeError, match=match):
        topics_to_indicator([["earn"], []], names)


@pytest.mark.parametrize("kwargs, match", [
    # A truthy string used to give a sparse matrix, None a dense one.
    (dict(sparse="False"), r"sparse must be a bool, got 'False'"),
    (dict(sparse=None), r"sparse must be a bool, got None"),
    (dict(dtype="U2"), r"dtype must be a bool, integer or float dtype .*got <U2"),
    (dict(dtype=np.float16), r"dtype must be a bool, integer or float dtype other than float16 "
                             r"\(scipy.sparse has none\), got float16"),
    (dict(dtype="not a dtype"), r"dtype must be a NumPy dtype, got 'not a dtype'"),
])
def test_topics_to_indicator_bad_options(kwargs, match):
    with pytest.raises(TypeError, match=match):
        topics_to_indicator([["earn"], []], **kwargs)


def test_topics_to_indicator_plain_str_is_one_label():
    Y, names = topics_to_indicator(["earn", ["acq", "earn"]], sparse=False)
    assert names == ["acq", "earn"]
    np.testing.assert_array_equal(Y, [[0, 1], [1, 1]])


def test_topics_to_indicator():
    Y, names = topics_to_indicator([["b", "a"], [], ["b", "b"]])
    assert names == ["a", "b"]
    np.testing.assert_array_equal(Y.toarray(), [[1, 1], [0, 0], [0, 1]])
    assert Y.has_sorted_indices
    dense, _ = topics_to_indicator([["x"]], ["x", "y"], sparse=False, dtype=np.float64)
    assert dense.dtype == np.float64
    np.testing.assert_array_equal(dense, [[1.0, 0.0]])
    half, _ = topics_to_indicator([["y", "y"], []], ["x", "y"], sparse=False, dtype=np.float16)
    assert half.dtype == np.float16  # dense: no scipy.sparse in between
    np.testing.assert_array_equal(half, [[0, 1], [0, 0]])
    # dict keys keep their order: they used to be refused as a set.
    keyed, names = topics_to_indicator([["y"]], {"y": 0, "x": 1}.keys())
    assert names == ["y", "x"]
    np.testing.assert_array_equal(keyed.toarray(), [[1, 0]])
    with pytest.raises(ValueError, match="document 0 has label 'z'"):
        topics_to_indicator([["z"]], ["x"])
    # A repeated name left its first column empty.
    with pytest.raises(ValueError, match=r"category_names must not repeat a name, got \['x'\]"):
        topics_to_indicator([["x"]], ["x", "y", "x"])


# ---------------------------------------------------------------------------
# SMART collections
# ---------------------------------------------------------------------------

def _crlf(text):
    return text.replace("\n", "\r\n").encode("latin-1")


ADI_FILES = {
    "ADI.ALL": _crlf(
        ".I 1\n.T\nfirst title\n.A\nA. AUTHOR\n.A\nB. AUTHOR\n.W\nfirst abstract  \nline two\n"
        ".I 2\n.T\nsecond title\n.W\nsecond abstract\n"
        ".I 3\n.W\nthird has no title\n"),
    "ADI.QRY": _crlf(".I 1\n.W\nwhat about titles?\n.I 2\n.W\nand abstracts?\n"),
    "ADI.REL": _crlf("1   1   0   0.000000   \n1   3   0   0.000000\n2   2   0   0.000000\n"),
}
CRAN_FILES = {
    "cran.all.1400": (
        ".I 1\n.T\nwing flow .\n.A\nsmith\n.B\nj. ae. 1958\n.W\nwing flow .\nlift increase\n"
        ".A\nstray line of the abstract\n.B\nanother stray line\n.T\nstray title line\n"
        ".I 2\n.T\nheat .\n.A\njones\n.B\nnaca\n.W\nheat transfer\n.W\nsecond part\n"
    ).encode("ascii"),
    "cran.qry": _crlf(".I 001\n.W\nwing lift ?\n.I 004\n.W\nheat ?\n.I 009\n.W\nnothing\n"),
    "cranqrel": b"1 1 2 \n1 2 -1 \n2 2 1 \n3 1 -1 \n",
}
MED_FILES = {
    "MED.ALL": _crlf(".I 1\n.W\n glucose levels .\n.I 2\n.W\n lens of the eye .\n"),
    "MED.QRY": _crlf(".I 1\n.W\n the crystalline lens.\n"),
    "MED.REL": b"1 0 2 1\n",
}


def test_smart_adi_archive_and_folder(tmp_path):
    archive = _write_tar(tmp_path / "adi.tar.gz", ADI_FILES)
    _write_tree(tmp_path / "adi", ADI_FILES)
    for path in (archive, tmp_path, tmp_path / "adi"):
        col = load_smart(path, "ADI")
        assert col.name == "adi"
        assert col.doc_ids.tolist() == [1, 2, 3]
        assert col.documents == ["first title\nfirst abstract\nline two",
                                 "second title\nsecond abstract", "third has no title"]
        assert col.doc_fields[0]["A"] == "A. AUTHOR\nB. AUTHOR"
        assert col.queries == ["what about titles?", "and abstracts?"]
        np.testing.assert_array_equal(col.query_ids, [1, 2])
        assert col.qrels == {1: frozenset({1, 3}), 2: frozenset({2})}
        assert col.relevance == {1: {1: 1, 3: 1}, 2: {2: 1}}


def test_smart_cran_renumbers_queries_and_folds_stray_tags(tmp_path):
    col = load_smart(_write_tar(tmp_path / "cran.tar.gz", CRAN_FILES), "cran")
    np.testing.assert_array_equal(col.original_query_ids, [1, 4, 9])
    np.testing.assert_array_equal(col.query_ids, [1, 2, 3])
    # Grade -1 ("no interest") is kept in relevance but is not relevant; query
    # 3 has only such a judgement, so it is absent from qrels.
    assert col.qrels == {1: frozenset({1}), 2: frozenset({2})}
    assert col.relevance == {1: {1: 2, 2: -1}, 2: {2: 1}, 3: {1: -1}}
    assert col.doc_fields[0]["A"] == "smith"
    assert col.doc_fields[0]["W"] == (
        "wing flow .\nlift increase\nstray line of the abstract\nanother stray line\n"
        "stray title line")
    assert col.doc_fields[0]["T"] == "wing flow ."
    assert col.doc_fields[1]["W"] == "heat transfer\nsecond part"


def test_smart_med_trec_qrels(tmp_path):
    _write_tree(tmp_path, MED_FILES)
    col = load_smart(tmp_path, "med")
    assert col.documents == ["glucose levels .", "lens of the eye ."]
    assert col.qrels == {1: frozenset({2})}


def test_smart_med_trec_grade_zero_is_not_relevant(tmp_path):
    _write_tree(tmp_path, dict(MED_FILES, **{"MED.REL": b"1 0 1 0\n1 0 2 1\n"}))
    col = load_smart(tmp_path, "med")
    assert col.relevance == {1: {1: 0, 2: 1}}
    assert col.qrels == {1: frozenset({2})}


def test_smart_med_rel_is_preferred_to_med_rel_old(tmp_path):
    # The Glasgow archive holds both; MED.REL.OLD is only a fallback.
    _write_tree(tmp_path, dict(MED_FILES, **{"MED.REL.OLD": _crlf("1   1     0   0.000000\n")}))
    assert load_smart(tmp_path, "med").qrels == {1: frozenset({2})}
    (tmp_path / "MED.REL").unlink()
    assert load_smart(tmp_path, "med").qrels == {1: frozenset({1})}


def test_smart_query_fields_after_the_text_stay_apart(tmp_path):
    # CISI queries have .B (and .A) fields after .W: not part of the query text.
    qry = _crlf(".I 1\n.W\nwhat about titles?\n.B\nsome source\n"
                ".I 2\n.W\nand abstracts?\n.A\nan author\n")
    _write_tree(tmp_path, dict(ADI_FILES, **{"ADI.QRY": qry}))
    col = load_smart(tmp_path, "adi")
    assert col.queries == ["what about titles?", "and abstracts?"]
    assert col.query_fields[0]["B"] == "some source"
    assert col.query_fields[1]["A"] == "an author"


def test_smart_dotted_line_with_words_is_text(tmp_path):
    # Only a lone tag (".B") opens a field; ".B 12" is a line of the abstract.
    # Tags are upper-case letters: ".b" is text too.
    docs = _crlf(".I 1\n.W\nsee\n.B 12\nabove\n.b\nend\n.I 2\n.W\ntwo\n.I 3\n.W\nthree\n")
    _write_tree(tmp_path, dict(ADI_FILES, **{"ADI.ALL": docs}))
    assert load_smart(tmp_path, "adi").doc_fields[0] == {"W": "see\n.B 12\nabove\n.b\nend"}


def test_smart_lone_carriage_returns_end_lines(tmp_path):
    _write_tree(tmp_path / "crlf", ADI_FILES)
    _write_tree(tmp_path / "cr", {k: v.replace(b"\r\n", b"\r") for k, v in ADI_FILES.items()})
    crlf = load_smart(tmp_path / "crlf", "adi")
    col = load_smart(tmp_path / "cr", "adi")
    assert col.documents == crlf.documents
    assert col.queries == crlf.queries
    assert col.qrels == crlf.qrels


@pytest.mark.parametrize("archive", ["adi.tgz", "ADI.tar.gz"])
def test_smart_folder_holding_an_archive_of_another_name(tmp_path, archive):
    _write_tar(tmp_path / archive, ADI_FILES)
    assert load_smart(tmp_path, "adi").doc_ids.tolist() == [1, 2, 3]


def test_smart_blank_lines_in_relevance_files_are_skipped(tmp_path):
    rel = ADI_FILES["ADI.REL"] + b"\r\n   \r\n"
    _write_tree(tmp_path, dict(ADI_FILES, **{"ADI.REL": b"\r\n" + rel}))
    assert load_smart(tmp_path, "adi").qrels == {1: frozenset({1, 3}), 2: frozenset({2})}


def test_smart_archive_with_a_top_folder(tmp_path):
    archive = _write_tar(tmp_path / "adi.tar.gz", {f"adi/{k}": v for k, v in ADI_FILES.items()})
    col = load_smart(archive, "adi")
    assert col.doc_ids.tolist() == [1, 2, 3]
    assert col.qrels == {1: frozenset({1, 3}), 2: frozenset({2})}


def test_smart_collections_are_found_in_a_data_folders_subfolders(tmp_path):
    # load_20newsgroups and load_reuters21578 find their corpus in a data
    # folder's subfolder; load_smart("../shared/data", "med") did not look in
    # ir-classic/, where the shared data keep the four collections.
    (tmp_path / "data" / "ir-classic").mkdir(parents=True)
    _write_tar(tmp_path / "data" / "ir-classic" / "adi.tar.gz", ADI_FILES)
    _write_tree(tmp_path / "other" / "adi", ADI_FILES)
    for folder in (tmp_path / "data", tmp_path / "other"):
        assert load_smart(folder, "adi").doc_ids.tolist() == [1, 2, 3]
    with pytest.raises(DatasetNotFoundError, match=r"no CISI collection under .*: expected "
                                                   r"CISI.ALL or cisi.tar.gz in it, or in its "
                                                   r"ir-classic/ or cisi/ subfolder"):
        load_smart(tmp_path / "data", "cisi")


def test_smart_bad_input(tmp_path):
    with pytest.raises(ValueError,
                       match=r"name must be one of \['adi', 'cisi', 'cran', 'med'\], got 'trec'"):
        load_smart(tmp_path, "trec")
    with pytest.raises(DatasetNotFoundError, match="no ADI collection under"):
        load_smart(tmp_path, "adi")
    if os.path.exists("/dev/null"):  # a path that is neither a file nor a folder
        # Used to raise a bare NotADirectoryError.
        with pytest.raises(DatasetNotFoundError,
                           match=r"ADI collection not found: '/dev/null' is neither a folder "
                                 r"nor an archive"):
            load_smart("/dev/null", "adi")
    partial = _write_tar(tmp_path / "adi.tar.gz",
                         {k: v for k, v in ADI_FILES.items() if k != "ADI.QRY"})
    with pytest.raises(ValueError, match="has no ADI.QRY file"):
        load_smart(partial, "adi")
    # The same pair judged twice differently: the later grade silently won
    # (here the relevant (1, 1) vanished from qrels). Twice alike is kept once.
    conflicting = dict(CRAN_FILES, cranqrel=b"1 1 2\n1 2 3\n1 1 -1\n")
    _write_tree(tmp_path / "conflict", conflicting)
    with pytest.raises(ValueError, match=r"cranqrel line 3: query 1 and document 1 are "
                                         r"judged -1 here but 2 on line 1"):
        load_smart(tmp_path / "conflict", "cran")
    _write_tree(tmp_path / "repeated", dict(CRAN_FILES, cranqrel=b"1 1 2\n1 1 2\n"))
    assert load_smart(tmp_path / "repeated", "cran").relevance == {1: {1: 2}}
    # A grade of digits with an optional minus: int() alone read '1_0' as 10.
    _write_tree(tmp_path / "grade", dict(CRAN_FILES, cranqrel=b"1 1 1_0\n"))
    with pytest.raises(ValueError, match=r"cranqrel line 1: cannot read '1 1 1_0' as a graded "
                                         r"relevance judgement"):
        load_smart(tmp_path / "grade", "cran")
    bad_rel = dict(ADI_FILES, **{"ADI.REL": b"1 one 0 0.0\n"})
    _write_tree(tmp_path / "badrel", bad_rel)
    with pytest.raises(ValueError, match=r"ADI.REL line 1: cannot read '1 one 0 0.0'"):
        load_smart(tmp_path / "badrel", "adi")
    undefined = dict(ADI_FILES, **{"ADI.REL": b"7 1 0 0.0\n"})
    _write_tree(tmp_path / "undefined", undefined)
    with pytest.raises(ValueError, match=r"judges queries \[7\]"):
        load_smart(tmp_path / "undefined", "adi")
    junk = dict(ADI_FILES, **{"ADI.ALL": b"preamble\n.I 1\n.W\ntext\n"})
    _write_tree(tmp_path / "junk", junk)
    with pytest.raises(ValueError, match="before the first '.I' record"):
        load_smart(tmp_path / "junk", "adi")


@pytest.mark.parametrize("replace, match", [
    # Each used to load, losing or inventing documents.
    ({"ADI.ALL": _crlf(".I 1\n.W\none\n.I 2 extra\n.W\ntwo\n.I 3\n.W\nthree\n")},
     r"ADI.ALL: malformed record start '.I 2 extra'; expected '.I <number>'"),
    # Its record used to vanish into record 1, '.I2' and all.
    ({"ADI.ALL": _crlf(".I 1\n.W\none\n.I2\n.W\ntwo\n.I 3\n.W\nthree\n")},
     r"ADI.ALL: malformed record start '.I2'; expected '.I <number>'"),
    # Used to raise a bare OverflowError from NumPy.
    ({"ADI.ALL": _crlf(".I 1\n.W\none\n.I 100000000000000000000\n.W\ntwo\n")},
     r"ADI.ALL: malformed record start '.I 100000000000000000000'; expected '.I <number>' "
     r"with the number in int64's range"),
    ({"ADI.ALL": _crlf(".I 1\n.W\none\n.I 2\n.W\ntwo\n.I 2\n.W\nthree\n")},
     r"ADI.ALL: record .I 2 appears twice"),
    ({"ADI.REL": _crlf("1 1 0 0.0\n2 99 0 0.0\n")},
     r"ADI.REL judges documents \[99\] that ADI.ALL does not define"),
    ({"ADI.ALL": b""}, r"ADI.ALL holds no '.I' record"),
    ({"ADI.QRY": b"\r\n"}, r"ADI.QRY holds no '.I' record"),
    ({"ADI.REL": b""}, r"ADI.REL holds no relevance judgement"),
    ({"ADI.ALL": _crlf(".I 1\n.W\none\n.I 9223372036854775808\n.W\ntwo\n")},
     r"ADI.ALL: malformed record start '.I 9223372036854775808'; expected '.I <number>' "
     r"with the number in int64's range"),
    ({"ADI.ALL": _crlf(".I 1\nstray text\n.W\none\n")},
     r"ADI.ALL: text 'stray text' outside any field of record 1"),
    # int() alone read these as 12 and 3: each loaded under another number.
    ({"ADI.ALL": _crlf(".I 1\n.W\none\n.I 1_2\n.W\ntwo\n")},
     r"ADI.ALL: malformed record start '.I 1_2'; expected '.I <number>'"),
    ({"ADI.ALL": _crlf(".I 1\n.W\none\n.I +3\n.W\ntwo\n")},
     r"ADI.ALL: malformed record start '.I \+3'; expected '.I <number>'"),
    ({"ADI.REL": _crlf("1 1 0 0.0\n1 1_2 0 0.0\n")},
     r"ADI.REL line 2: cannot read '1 1_2 0 0.0' as a pairs relevance judgement"),
    ({"ADI.REL": _crlf("+1 1 0 0.0\n")},
     r"ADI.REL line 1: cannot read '\+1 1 0 0.0' as a pairs relevance judgement"),
], ids=["malformed-I", "I-without-blank", "I-beyond-int64", "duplicate-I", "unknown-document",
        "empty-documents", "empty-queries", "empty-judgements", "I-just-beyond-int64",
        "text-outside-fields", "I-underscore", "I-sign", "judged-document-underscore",
        "judging-query-sign"])
def test_smart_damaged_files_are_refused(tmp_path, replace, match):
    _write_tree(tmp_path / "adi", dict(ADI_FILES, **replace))
    with pytest.raises(ValueError, match=match):
        load_smart(tmp_path / "adi", "adi")


# ---------------------------------------------------------------------------
# Copies that differ from the published corpora
# ---------------------------------------------------------------------------

_NG_GROUPS = [
    "alt.atheism", "comp.graphics", "comp.os.ms-windows.misc", "comp.sys.ibm.pc.hardware",
    "comp.sys.mac.hardware", "comp.windows.x", "misc.forsale", "rec.autos",
    "rec.motorcycles", "rec.sport.baseball", "rec.sport.hockey", "sci.crypt",
    "sci.electronics", "sci.med", "sci.space", "soc.religion.christian",
    "talk.politics.guns", "talk.politics.mideast", "talk.politics.misc",
    "talk.religion.misc"]


def test_a_file_of_the_corpus_is_refused_naming_its_folder(ng_dir, tmp_path):
    # It was read as an archive: "not a readable tar archive", which did not
    # say that the folder holding it would load.
    _write_tree(tmp_path / "r", {"reut2-000.sgm": b"<REUTERS>", "ADI.QRY": b".I 1",
                                 "course/cornell/page": b"<html>"})
    for load, path, corpus, folder in (
            (load_20newsgroups, ng_dir / "20news-bydate-train" / "sci.space" / "9",
             "20 Newsgroups", ng_dir),
            (load_reuters21578, tmp_path / "r" / "reut2-000.sgm", "Reuters-21578",
             tmp_path / "r"),
            (lambda p: load_smart(p, "adi"), tmp_path / "r" / "ADI.QRY",
             "ADI collection's", tmp_path / "r"),
            (load_webkb, tmp_path / "r" / "course" / "cornell" / "page", "WebKB",
             tmp_path / "r")):
        expected = (f"{str(path)!r} is one of the {corpus} files, not the corpus: pass the "
                    f"folder holding them, {str(folder)!r}, or the archive")
        with pytest.raises(DatasetNotFoundError, match=re.escape(expected)):
            load(path)


def test_an_archive_below_folders_named_like_the_corpus_loads(tmp_path, ng_tar, webkb_tar):
    """Only a file that is no archive is taken for one of the corpus's own:
    an archive in ~student/Downloads was refused as a WebKB page."""
    for load, archive, folder in (
            (load_webkb, webkb_tar, tmp_path / "student" / "Downloads"),
            (load_20newsgroups, ng_tar, tmp_path / "20news-bydate-train" / "Downloads")):
        folder.mkdir(parents=True)
        copy = folder / archive.name
        copy.write_bytes(archive.read_bytes())
        assert load(copy).filenames == load(archive).filenames
    # A plain (uncompressed) tar too.
    plain = tmp_path / "student" / "Downloads" / "webkb.tar"
    _write_tar(plain, WEBKB_FILES)
    assert load_webkb(plain).filenames == load_webkb(webkb_tar).filenames


def test_a_page_that_is_no_archive_is_still_refused(tmp_path, monkeypatch):
    # "BZh" alone is no bzip2 stream (its magic number runs on to "1AY&SY"),
    # and a page that cannot be read is refused as before, not a PermissionError.
    page = tmp_path / "student" / "cornell" / "page.html"
    page.parent.mkdir(parents=True)
    page.write_text("BZh, the bzip2 signature, is three bytes.\n")
    expected = re.escape(f"{str(page)!r} is one of the WebKB files, not the corpus")
    with pytest.raises(DatasetNotFoundError, match=expected):
        load_webkb(page)
    from kgeo import datasets

    def unreadable(path):
        raise PermissionError(13, "Permission denied", str(path))
    monkeypatch.setattr(datasets, "_compression", unreadable)
    with pytest.raises(DatasetNotFoundError, match=expected):
        load_webkb(page)


def test_a_folder_named_like_a_webkb_class_does_not_hide_its_archive(tmp_path, webkb_tar):
    data = tmp_path / "data"
    (data / "webkb").mkdir(parents=True)
    (data / "webkb" / "webkb-data.gtar.gz").write_bytes(webkb_tar.read_bytes())
    (data / "project").mkdir()
    (data / "project" / "notes.txt").write_text("not WebKB")
    assert load_webkb(data).filenames == load_webkb(webkb_tar).filenames


def test_20newsgroups_messages_with_nul_bytes_warn(ng_dir):
    # A message saved as UTF-16 loaded without a word, silently: Rainbow's
    # lexer (and RainbowVectorizer) ends a document at its first NUL.
    path = ng_dir / "20news-bydate-train" / "sci.space" / "8"
    path.write_bytes("Subject: utf-16\n\nwords".encode("utf-16"))
    with pytest.warns(UserWarning, match=r"^1 document\(s\) hold NUL bytes, such as "
                                         r"'20news-bydate-train/sci.space/8': not single-byte "
                                         r"text") as record:
        corpus = load_20newsgroups(ng_dir, subset="train")
    assert record[0].filename == __file__
    assert len(corpus) == 4  # kept, as Rainbow keeps it


def test_nul_byte_warning_counts_them_all_and_names_the_first_in_corpus_order(ng_dir):
    # Two such messages: both counted, the corpus's first (alt.atheism
    # before sci.space) named; naming the last passed the suite (a mutation
    # review).
    for name in ("sci.space/8", "alt.atheism/300"):
        (ng_dir / "20news-bydate-train" / name).write_bytes("words".encode("utf-16"))
    with pytest.warns(UserWarning, match=r"^2 document\(s\) hold NUL bytes, such as "
                                         r"'20news-bydate-train/alt.atheism/300': "):
        load_20newsgroups(ng_dir, subset="train")


def test_fetch_names_the_callers_line_in_its_warnings(local_server, tmp_path):
    # The warning's fixed stacklevel pointed inside kgeo through fetch_*.
    www, base = local_server
    files = {f"20news-bydate-test/{g}/{i}": b"From: a@b\n\nbody\n"
             for i, g in enumerate(_NG_GROUPS)}
    _write_tar(www / "20news-bydate.tar.gz", files)
    with pytest.warns(IncompleteCorpusWarning) as record:
        fetch_20newsgroups(data_home=tmp_path / "cache", subset="test",
                           url=f"{base}/20news-bydate.tar.gz", sha256=None)
    assert record[0].filename == __file__


def test_20newsgroups_with_the_published_groups_but_fewer_messages_warns(tmp_path):
    # An interrupted extraction leaves every group in the test split (the
    # archive's first) and some groups without any training message: it
    # loaded as a smaller corpus with empty classes, without a word.
    files = {f"20news-bydate-test/{g}/{i}": b"From: a@b\n\nbody\n"
             for i, g in enumerate(_NG_GROUPS)}
    files.update({f"20news-bydate-train/{g}/{100 + i}": b"From: a@b\n\nbody\n"
                  for i, g in enumerate(_NG_GROUPS[:13])})
    _write_tree(tmp_path / "partial", files)
    with pytest.warns(IncompleteCorpusWarning) as record:
        corpus = load_20newsgroups(tmp_path / "partial", subset="train")
    message = str(record[0].message)
    assert message.startswith(f"{str(tmp_path / 'partial')!r} holds the 20 groups of 20 "
                              f"Newsgroups bydate but not its published messages: 13 of "
                              f"11,314 train messages; groups that differ: alt.atheism 1 of "
                              f"480 train, comp.graphics 1 of 584 train, ")
    assert message.endswith("and 15 more. An interrupted extraction? Extract "
                            "20news-bydate.tar.gz again, or load the archive itself")
    assert record[0].filename == __file__  # the caller's line, not the loader's
    assert len(corpus) == 13 and len(corpus.target_names) == 20
    with pytest.warns(IncompleteCorpusWarning, match=r"13 of 11,314 train messages; 20 of "
                                                     r"7,532 test messages; "):
        load_20newsgroups(tmp_path / "partial", subset="all")
    # Fewer groups make another corpus in the same layout: nothing to compare.
    _write_tree(tmp_path / "other", NG_FILES)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IncompleteCorpusWarning)
        assert len(load_20newsgroups(tmp_path / "other", subset="all")) == len(NG_FILES)


def test_20newsgroups_extraction_stopped_inside_the_test_split_warns(tmp_path):
    # Stopped within the test split (the archive's first), a folder holds
    # its first 11 groups and no training split: subset="test" loaded 11
    # classes as a corpus of its own, without a word (a review).
    files = {f"20news-bydate-test/{g}/{i}": b"From: a@b\n\nbody\n"
             for i, g in enumerate(_NG_GROUPS[:11])}
    _write_tree(tmp_path / "stopped", files)
    with pytest.warns(IncompleteCorpusWarning) as record:
        corpus = load_20newsgroups(tmp_path / "stopped", subset="test")
    assert len(record) == 1
    message = str(record[0].message)
    assert message.startswith(f"{str(tmp_path / 'stopped')!r} holds the first 11 of the 20 "
                              f"groups (in the archive's order) of 20 Newsgroups bydate but "
                              f"not its published messages: 11 of 7,532 test messages; "
                              f"groups that differ: alt.atheism 1 of 319 test, ")
    assert len(corpus) == 11 and len(corpus.target_names) == 11
    with pytest.raises(DatasetNotFoundError, match="20news-bydate-train"):
        load_20newsgroups(tmp_path / "stopped", subset="train")
    # Groups that are not the archive's first are a corpus of their own.
    files = {f"20news-bydate-test/{g}/{i}": b"From: a@b\n\nbody\n"
             for i, g in enumerate(_NG_GROUPS[1:11])}
    _write_tree(tmp_path / "chosen", files)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IncompleteCorpusWarning)
        assert len(load_20newsgroups(tmp_path / "chosen", subset="test")) == 10


def test_reuters_copy_short_of_files_or_stories_warns(tmp_path, reuters_dir):
    # 11 of the 22 files, or the last cut at a story's end, loaded as a
    # smaller ModApte corpus without a word.
    with pytest.warns(IncompleteCorpusWarning) as record:
        load_reuters21578(reuters_dir)
    assert str(record[0].message) == (
        f"{str(reuters_dir)!r} is not a whole copy of Reuters-21578 Distribution 1.0 "
        f"(reut2-000.sgm ... reut2-021.sgm, 1,000 stories each and 578 in the last): "
        f"20 of its 22 files missing (reut2-002.sgm, reut2-003.sgm, reut2-004.sgm and 17 "
        f"more); reut2-000.sgm 6 stories, not 1,000, reut2-001.sgm 6 stories, not 1,000. "
        f"ModApte's 9,603 training and 3,299 test stories are not all there. Extract "
        f"reuters21578.tar.gz again, or load the archive itself")
    assert record[0].filename == __file__
    story = _story(13, "TRAIN", ["earn"], "X", "y").encode("latin-1")
    extra = dict(_reuters_files(), **{"reut2-022.sgm": story})
    _write_tree(tmp_path / "extra", extra)
    with pytest.warns(IncompleteCorpusWarning, match=r"missing \(reut2-002.sgm, .*\); files "
                                                     r"it does not have \(reut2-022.sgm\); "):
        load_reuters21578(tmp_path / "extra")


def test_smart_collection_of_other_sizes_warns(tmp_path):
    # A query file cut before its last record loaded 111 CISI queries.
    _write_tree(tmp_path / "adi", ADI_FILES)
    with pytest.warns(IncompleteCorpusWarning) as record:
        load_smart(tmp_path / "adi", "adi")
    assert str(record[0].message) == (
        f"{str(tmp_path / 'adi')!r} is not the published ADI collection: 3 documents "
        f"(published: 82), 2 queries (published: 35), 3 relevance judgements (published: "
        f"170). A file cut short? Extract adi.tar.gz again, or load the archive itself")
    assert record[0].filename == __file__


# A copy with more than the published messages, stories or judgements, or
# with only its relevance file short, is not the published one either: a
# mutation review (helper 134) found that each check could be "<" in place
# of "!=", or skip the judgements, and pass the suite.

def test_20newsgroups_with_more_messages_than_published_warns(tmp_path, monkeypatch):
    # The published counts made one message per group, so that the copy is
    # small; one group then holds an extra message, as a folder another copy
    # was extracted into, or a test message moved to training, would.
    groups = sorted(kgeo.datasets._NG_BYDATE_COUNTS)
    monkeypatch.setattr(kgeo.datasets, "_NG_BYDATE_COUNTS", {g: (1, 1) for g in groups})
    files = {f"20news-bydate-train/{g}/{i}": b"From: a@b\n\nbody\n"
             for i, g in enumerate(groups)}
    _write_tree(tmp_path / "exact", files)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IncompleteCorpusWarning)
        assert len(load_20newsgroups(tmp_path / "exact", subset="train")) == 20
    files["20news-bydate-train/sci.space/999"] = b"From: c@d\n\nextra\n"
    _write_tree(tmp_path / "more", files)
    with pytest.warns(IncompleteCorpusWarning, match=r"21 of 20 train messages; groups that "
                                                     r"differ: sci.space 2 of 1 train"):
        assert len(load_20newsgroups(tmp_path / "more", subset="train")) == 21


def _reuters_story(newid):
    return (f'<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" '
            f'OLDID="{9000 + newid}" NEWID="{newid}">\n<DATE> 1-MAR-1987</DATE>\n'
            f"<TOPICS><D>earn</D></TOPICS>\n<TEXT><TITLE>T{newid}</TITLE><BODY>b</BODY>"
            f"</TEXT>\n</REUTERS>\n")


def test_reuters_file_with_more_stories_than_published_warns(tmp_path, monkeypatch):
    # reut2-000.sgm made to hold one story: a file holding two (a story
    # appended from elsewhere) is not that copy.
    monkeypatch.setattr(kgeo.datasets, "_REUTERS_STORIES_PER_FILE", {"reut2-000.sgm": 1})
    _write_tree(tmp_path / "exact", {"reut2-000.sgm": _reuters_story(1).encode()})
    with warnings.catch_warnings():
        warnings.simplefilter("error", IncompleteCorpusWarning)
        assert len(load_reuters21578(tmp_path / "exact")) == 1
    _write_tree(tmp_path / "more",
                {"reut2-000.sgm": (_reuters_story(1) + _reuters_story(2)).encode()})
    with pytest.warns(IncompleteCorpusWarning, match=r"reut2-000.sgm 2 stories, not 1\."):
        assert len(load_reuters21578(tmp_path / "more")) == 2


def test_smart_relevance_file_of_other_size_warns(tmp_path, monkeypatch):
    # Documents and queries as published, one judgement lost: checking the
    # documents and queries alone loaded it without a word.
    monkeypatch.setitem(kgeo.datasets._SMART_SIZES, "adi", (2, 1, 2))
    files = {"ADI.ALL": b".I 1\r\n.W\r\none\r\n.I 2\r\n.W\r\ntwo\r\n",
             "ADI.QRY": b".I 1\r\n.W\r\nquery\r\n",
             "ADI.REL": b"1 1 0 0.000000\r\n1 2 0 0.000000\r\n"}
    _write_tree(tmp_path / "exact", files)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IncompleteCorpusWarning)
        load_smart(tmp_path / "exact", "adi")
    files["ADI.REL"] = b"1 1 0 0.000000\r\n"
    _write_tree(tmp_path / "short", files)
    with pytest.warns(IncompleteCorpusWarning, match=r"2 documents \(published: 2\), 1 queries "
                                                     r"\(published: 1\), 1 relevance "
                                                     r"judgements \(published: 2\)"):
        load_smart(tmp_path / "short", "adi")


@pytest.mark.parametrize("file, cut_to, problem", [
    ("ADI.ALL", b".I 3\r\n.W\r\nthird has no ti", "ends inside a line"),
    ("ADI.ALL", b".I 3\r\n.W\r\nthird has no title\r", None),  # a CRLF cut in its middle
    ("ADI.ALL", b".I 3\r\n.W\r\n",
     "ends with a record whose text \\(.W\\) is missing or empty, where 2 of its other 2 "
     "records have text"),
    ("ADI.ALL", b".I 3\r\n", "ends with a record whose text \\(.W\\) is missing"),
    ("ADI.ALL", b".I 3\r\n.W\r\nthird has no title\r\n  \x1a", None),  # blanks, DOS EOF
    ("ADI.QRY", b".I 2\r\n.W\r\nand abs", "ends inside a line"),
    ("ADI.QRY", b".I 2\r\n", "ends with a record whose text \\(.W\\) is missing"),
], ids=["mid-line", "between-cr-and-lf", "after-w", "after-i", "trailing-blanks",
        "query-mid-line", "query-after-i"])
def test_smart_file_cut_inside_its_last_record_warns(tmp_path, file, cut_to, problem):
    # The cut keeps the number of records, so the sizes' check cannot see
    # it: the last document lost its words without a warning.
    whole = ADI_FILES[file]
    kept = whole[:whole.rindex(b".I ")] + cut_to
    assert whole.startswith(kept.rstrip(b" \x1a")) and kept != whole
    _write_tree(tmp_path / "adi", dict(ADI_FILES, **{file: kept}))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        load_smart(tmp_path / "adi", "adi")
    about_the_end = [w for w in record if file in str(w.message)]
    if problem is None:
        assert about_the_end == []
        return
    assert len(about_the_end) == 1, [str(w.message) for w in record]
    assert issubclass(about_the_end[0].category, IncompleteCorpusWarning)
    assert about_the_end[0].filename == __file__
    assert re.fullmatch(
        rf"{file} in {re.escape(repr(str(tmp_path / 'adi')))} {problem}.*: a file cut "
        rf"short\? Extract adi.tar.gz again, or load the archive itself",
        str(about_the_end[0].message)), str(about_the_end[0].message)


def test_smart_whole_files_do_not_warn_of_a_cut(tmp_path):
    # A last record may lack fields others have (ADI's third has no title),
    # and a file may end in blank lines; only the text's absence is a cut.
    files = dict(ADI_FILES, **{"ADI.QRY": ADI_FILES["ADI.QRY"] + b"\r\n\r\n"})
    _write_tree(tmp_path / "adi", files)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        load_smart(tmp_path / "adi", "adi")
    assert len(record) == 1  # the sizes' warning alone
    assert str(record[0].message).startswith(
        f"{str(tmp_path / 'adi')!r} is not the published ADI collection: 3 documents")


def test_smart_queries_file_without_any_text_does_not_warn_of_a_cut(tmp_path):
    # Every record's .W empty, the last one's too: that file has no text to
    # lose, so an empty last record is no sign of a cut.
    files = dict(ADI_FILES, **{"ADI.QRY": _crlf(".I 1\n.W\n.I 2\n.W\n")})
    _write_tree(tmp_path / "adi", files)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        corpus = load_smart(tmp_path / "adi", "adi")
    assert [str(w.message) for w in record if "ADI.QRY" in str(w.message)] == []
    assert list(corpus.queries) == ["", ""]


@pytest.mark.parametrize("name, files, line", [
    # Cut 12 bytes into CISI.REL's line "    32    323\t0\t0.000000": its
    # first two columns read as the pair (32, 32), which is not in the file.
    ("adi", dict(ADI_FILES, **{"ADI.REL": b"1 1 0 0.000000\n    32    3"}), "32    3"),
    ("adi", dict(ADI_FILES, **{"ADI.REL": b"1 1 0 0.000000\n1 3 0"}), "1 3 0"),
    ("med", dict(MED_FILES, **{"MED.REL": b"1 0 2 1\n1 0 1"}), "1 0 1"),
    ("cran", dict(CRAN_FILES, cranqrel=b"1 1 2\n2 2 1 5\n"), "2 2 1 5"),
], ids=["pairs-cut-in-the-document", "pairs-cut-after-it", "trec-cut", "graded-extra"])
def test_smart_relevance_lines_need_their_columns(tmp_path, name, files, line):
    _write_tree(tmp_path / name, files)
    fmt, columns = {"adi": ("pairs", "4 columns: query doc 0 0.0"),
                    "med": ("trec", "4 columns: query 0 doc grade"),
                    "cran": ("graded", "3 columns: query doc grade")}[name]
    with pytest.raises(ValueError, match=rf"line 2: cannot read '{line}' as a {fmt} "
                                         rf"relevance judgement \({columns}\)"):
        load_smart(tmp_path / name, name)


# ---------------------------------------------------------------------------
# Real corpora (skipped when ../shared/data is absent)
# ---------------------------------------------------------------------------

def _whole(load, *args, **kwargs):
    """``load(*args, **kwargs)``, failing on an IncompleteCorpusWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", IncompleteCorpusWarning)
        return load(*args, **kwargs)


@pytest.fixture(scope="module")
def real_20ng():
    return _whole(load_20newsgroups, _real("20news-bydate/20news-bydate.tar.gz"), subset="all")


def test_real_20newsgroups_counts(real_20ng):
    corpus = real_20ng
    assert len(corpus.target_names) == 20
    train, test = corpus.split == "train", corpus.split == "test"
    assert train.sum() == 11314 and test.sum() == 7532
    counts = {name: (int(np.sum(train & (corpus.target == i))),
                     int(np.sum(test & (corpus.target == i))))
              for i, name in enumerate(corpus.target_names)}
    assert counts["alt.atheism"] == (480, 319)
    assert counts["comp.graphics"] == (584, 389)
    assert counts["rec.sport.hockey"] == (600, 399)
    assert counts["talk.politics.misc"] == (465, 310)
    assert counts["talk.religion.misc"] == (377, 251)
    # Some messages hold CR bytes and bytes above 127 (not UTF-8): kept as read.
    assert sum("\r" in d for d in corpus.data) > 0
    assert sum(not d.isascii() for d in corpus.data) > 0


def test_real_20newsgroups_default_checksum():
    digest = hashlib.sha256(_real("20news-bydate/20news-bydate.tar.gz").read_bytes()).hexdigest()
    assert digest == NEWSGROUPS_SHA256


@pytest.mark.parametrize("view, n_train, n_test, n_categories", [
    ("modapte", 9603, 3299, None), ("r90", 7770, 3019, 90), ("r8", 5485, 2189, 8)])
def test_real_reuters_counts(view, n_train, n_test, n_categories):
    corpus = _whole(load_reuters21578, _real("reuters21578/reuters21578.tar.gz"), subset="all",
                    view=view)
    assert np.sum(corpus.split == "train") == n_train
    assert np.sum(corpus.split == "test") == n_test
    if n_categories is not None:
        assert len(corpus.category_names) == n_categories
    Y = corpus.indicator_matrix()
    assert Y.shape == (n_train + n_test, len(corpus.category_names))
    if view == "r8":
        assert corpus.category_names == ["acq", "crude", "earn", "grain", "interest",
                                         "money-fx", "ship", "trade"]
        np.testing.assert_array_equal(np.bincount(corpus.target[corpus.split == "train"]),
                                      [1596, 253, 2840, 41, 190, 206, 108, 251])
        np.testing.assert_array_equal(np.bincount(corpus.target[corpus.split == "test"]),
                                      [696, 121, 1083, 10, 81, 87, 36, 75])
        return
    # Stories per category and split; the multi-label views keep all of them.
    for name, expected in {"earn": (2877, 1087), "acq": (1650, 719),
                           "money-fx": (538, 179), "crude": (389, 189)}.items():
        j = corpus.category_names.index(name)
        got = tuple(int(Y[corpus.split == s][:, j].sum()) for s in ("train", "test"))
        assert got == expected, name


@pytest.mark.parametrize("name, n_docs, n_queries, n_judged", [
    ("adi", 82, 35, 35), ("cisi", 1460, 112, 76), ("cran", 1400, 225, 225), ("med", 1033, 30, 30)])
def test_real_smart_counts(name, n_docs, n_queries, n_judged):
    col = _whole(load_smart, _real("ir-classic"), name)
    assert len(col.documents) == len(col.doc_ids) == n_docs
    assert len(col.queries) == len(col.query_ids) == n_queries
    assert len(col.qrels) == n_judged
    # CRAN documents 471 and 995 are empty records in the distribution.
    empty = [int(i) for i, d in zip(col.doc_ids, col.documents, strict=True) if not d]
    assert empty == ([471, 995] if name == "cran" else [])
    assert all(col.queries)
    known = set(col.doc_ids.tolist())
    assert all(docs <= known for docs in col.qrels.values())
    if name == "cran":
        np.testing.assert_array_equal(col.query_ids, np.arange(1, 226))
        assert col.original_query_ids[:5].tolist() == [1, 2, 4, 8, 9]


def test_real_smart_relevance_line_replaced_by_a_repeat_warns(tmp_path):
    # ADI.REL with its last line overwritten by a copy of its first: 170
    # lines, 169 judgements. A pair judged twice alike is kept once, and the
    # count checked against the published 170 is of the pairs kept (a count
    # of the lines read, the repeat included, passed; helper 134).
    with tarfile.open(_real("ir-classic") / "adi.tar.gz") as tf:
        members = {m.name.rsplit("/", 1)[-1]: tf.extractfile(m).read()
                   for m in tf.getmembers() if m.isfile()}
    lines = [line for line in members["ADI.REL"].splitlines(keepends=True) if line.strip()]
    _write_tree(tmp_path, dict(members, **{"ADI.REL": b"".join(lines[:-1] + lines[:1])}))
    with pytest.warns(IncompleteCorpusWarning, match=r"82 documents \(published: 82\), 35 "
                                                     r"queries \(published: 35\), 169 "
                                                     r"relevance judgements \(published: 170\)"):
        collection = load_smart(tmp_path, "adi")
    assert sum(len(judged) for judged in collection.relevance.values()) == 169


@pytest.mark.parametrize("name, file", [("adi", "ADI.ALL"), ("med", "MED.QRY")])
def test_real_smart_file_cut_anywhere_in_its_last_record_warns(tmp_path, name, file):
    # Every cut inside the last record is either refused, warned of, or
    # falls at the end of a line of its text: a cut there leaves a shorter
    # abstract the format cannot tell apart from a whole one.
    with tarfile.open(_real("ir-classic") / f"{name}.tar.gz") as tf:
        members = {m.name.rsplit("/", 1)[-1]: tf.extractfile(m).read()
                   for m in tf.getmembers() if m.isfile()}
    whole = members[file]
    start = whole.rindex(b"\n.I ") + 1
    unseen = []
    for cut in range(start + 1, len(whole)):
        kept = whole[:cut]
        _write_tree(tmp_path / str(cut), dict(members, **{file: kept}))
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            try:
                load_smart(tmp_path / str(cut), name)
            except ValueError:  # e.g. '.I 3' left of '.I 30', a repeated record
                continue
        if not any(issubclass(w.category, IncompleteCorpusWarning) for w in record):
            unseen.append(kept)
    assert len(unseen) < 0.1 * (len(whole) - start)
    # (blanks after a line break are no text: a cut among a line's leading
    # blanks is a cut at the end of the line before)
    at_line_ends = [k for k in unseen if k.rstrip(b" \t").endswith((b"\n", b"\r"))
                    and b"\n.W" in k[start:] and not k.rstrip(b" \t").endswith(b".W\r\n")]
    assert unseen == at_line_ends


# ---------------------------------------------------------------------------
# Fetchers, against a server on 127.0.0.1 only
# ---------------------------------------------------------------------------

class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass

    def do_GET(self):
        if self.path.startswith("/short/"):
            # Announces 10,000 bytes, sends 10 and closes: urllib raises nothing.
            self.send_response(200)
            self.send_header("Content-Length", "10000")
            self.end_headers()
            self.wfile.write(b"0123456789")
            self.close_connection = True
            return
        super().do_GET()


@pytest.fixture
def local_server(tmp_path):
    """Serve tmp_path/www on 127.0.0.1 at an ephemeral port; yield (folder, base url)."""
    www = tmp_path / "www"
    www.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(www))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield www, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_fetch_20newsgroups_downloads_verifies_and_caches(local_server, tmp_path):
    www, base = local_server
    archive = _write_tar(www / "20news-bydate.tar.gz", NG_FILES)
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    cache = tmp_path / "cache"
    corpus = fetch_20newsgroups(data_home=cache, subset="test",
                                url=f"{base}/20news-bydate.tar.gz", sha256=digest.upper(),
                                timeout=np.float32(30))  # any real number (refused before)
    assert len(corpus) == 3
    cached = cache / "20news-bydate" / "20news-bydate.tar.gz"
    assert cached.read_bytes() == archive.read_bytes()
    assert sorted(p.name for p in cached.parent.iterdir()) == ["20news-bydate.tar.gz"]
    # Cached: removing the served file proves the second call reads the cache.
    archive.unlink()
    again = fetch_20newsgroups(data_home=cache, subset="train",
                               url=f"{base}/20news-bydate.tar.gz", sha256=digest)
    assert len(again) == 3


def test_fetch_checks_a_cached_archive_against_sha256(local_server, tmp_path):
    # A cached file used to be trusted whatever sha256 said.
    www, base = local_server
    archive = _write_tar(www / "20news-bydate.tar.gz", NG_FILES)
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    cache = tmp_path / "cache"
    cached = cache / "20news-bydate" / "20news-bydate.tar.gz"
    cached.parent.mkdir(parents=True)
    _write_tar(cached, {**NG_FILES, "20news-bydate-test/sci.space/99": b"Subject: x\n\ny"})
    with pytest.raises(ValueError, match=r"checksum mismatch for the cached file .*"
                                         r"20news-bydate.tar.gz': expected " + digest):
        fetch_20newsgroups(data_home=cache, url=f"{base}/20news-bydate.tar.gz", sha256=digest)
    assert cached.is_file()  # named, not deleted
    assert len(fetch_20newsgroups(data_home=cache, subset="test",
                                  url=f"{base}/20news-bydate.tar.gz", sha256=None)) == 4


def test_fetch_checksum_mismatch_removes_partial_file(local_server, tmp_path):
    www, base = local_server
    _write_tar(www / "20news-bydate.tar.gz", NG_FILES)
    cache = tmp_path / "cache"
    with pytest.raises(ValueError,
                       match="SHA-256 checksum mismatch .* expected 0{64}, got [0-9a-f]{64}"):
        fetch_20newsgroups(data_home=cache, url=f"{base}/20news-bydate.tar.gz", sha256="0" * 64)
    assert list((cache / "20news-bydate").iterdir()) == []


def test_fetch_errors(local_server, tmp_path):
    # Every call gets the local server's address: one whose check moved
    # after the download must not reach the published host (a review).
    _, base = local_server
    cache = tmp_path / "cache"
    with pytest.raises(OSError, match="could not download"):
        fetch_20newsgroups(data_home=cache, url=f"{base}/missing.tar.gz", sha256=None)
    assert list((cache / "20news-bydate").iterdir()) == []
    with pytest.raises(DatasetNotFoundError, match="not cached and download_if_missing=False"):
        fetch_20newsgroups(data_home=cache, url=f"{base}/x.tar.gz", download_if_missing=False)
    with pytest.raises(ValueError, match="sha256 must be None or a hex string of 64 characters"):
        fetch_20newsgroups(data_home=cache, url=f"{base}/x.tar.gz", sha256="abc")
    with pytest.raises(ValueError, match="must be an http:// or https:// address"):
        fetch_20newsgroups(data_home=cache, url="ftp://127.0.0.1/x.tar.gz", sha256=None)
    with pytest.raises(ValueError, match="subset must be one of"):
        fetch_20newsgroups(data_home=cache, url=f"{base}/x.tar.gz", subset="everything")
    for timeout in (0, -1, float("nan"), float("inf"), 1e12):
        with pytest.raises(ValueError, match=r"timeout must be a number of seconds in "
                                             r"\(0, 1e\+06\], got"):
            fetch_20newsgroups(data_home=cache, url=f"{base}/x.tar.gz", timeout=timeout)
    for timeout in (True, np.bool_(True), "60", None):
        with pytest.raises(ValueError, match=r"timeout must be a number of seconds in"):
            fetch_20newsgroups(data_home=cache, url=f"{base}/x.tar.gz", timeout=timeout)
    with pytest.raises(TypeError, match="download_if_missing must be True or False, got 'no'"):
        fetch_20newsgroups(data_home=cache, url=f"{base}/x.tar.gz", download_if_missing="no")
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    with pytest.raises(ValueError, match=r"data_home must be a folder, but .* is a file"):
        fetch_20newsgroups(data_home=not_a_folder, url=f"{base}/x.tar.gz")
    # Used to be a bare FileExistsError from mkdir.
    (tmp_path / "cache2").mkdir()
    (tmp_path / "cache2" / "20news-bydate").write_text("x")
    with pytest.raises(ValueError, match=r"the cache folder .*20news-bydate' is a file"):
        fetch_20newsgroups(data_home=tmp_path / "cache2", url=f"{base}/x.tar.gz", sha256=None)
    # A folder where the archive goes: refused before the download, which
    # failed at its final rename (IsADirectoryError).
    (tmp_path / "cache3" / "20news-bydate" / "x.tar.gz").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"x.tar.gz', where the downloaded archive goes, is "
                                         r"not a file"):
        fetch_20newsgroups(data_home=tmp_path / "cache3", url=f"{base}/x.tar.gz", sha256=None)
    # The class names are checked before anything is downloaded.
    with pytest.raises(ValueError, match=r"unknown WebKB classes \['students'\]"):
        fetch_webkb(data_home=cache, url=f"{base}/missing.tar.gz", classes=["students"])
    assert not (cache / "webkb").exists()


def test_fetch_incomplete_download_is_refused_and_not_cached(local_server, tmp_path):
    _, base = local_server
    cache = tmp_path / "cache"
    with pytest.raises(OSError, match=r"incomplete download of .*: received 10 of the 10000 "
                                      r"bytes announced"):
        fetch_20newsgroups(data_home=cache, url=f"{base}/short/20news-bydate.tar.gz", sha256=None)
    assert list((cache / "20news-bydate").iterdir()) == []


def test_fetch_never_caches_a_file_that_is_not_an_archive(local_server, tmp_path):
    www, base = local_server
    (www / "page.tar.gz").write_text("<html>moved</html>")  # what a portal serves with 200
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match=r"downloaded from .*page.tar.gz is not a usable "
                                         r"archive, and was removed"):
        fetch_20newsgroups(data_home=cache, url=f"{base}/page.tar.gz", sha256=None)
    assert list((cache / "20news-bydate").iterdir()) == []
    # A damaged file already in the cache is named, so the user can delete it.
    (cache / "20news-bydate" / "20news-bydate.tar.gz").write_bytes(b"junk")
    with pytest.raises(ValueError, match=r"cached archive .*20news-bydate.tar.gz' is not "
                                         r"usable; delete it to download it again"):
        fetch_20newsgroups(data_home=cache, url=f"{base}/20news-bydate.tar.gz", sha256=None)


def test_fetch_url_without_a_file_name_uses_the_default(local_server, tmp_path):
    www, base = local_server
    (www / "dir").mkdir()
    _write_tar(www / "dir" / "index.html", NG_FILES)  # what the server sends for dir/
    cache = tmp_path / "cache"
    assert len(fetch_20newsgroups(data_home=cache, url=f"{base}/dir/", sha256=None)) == 3
    assert sorted(p.name for p in (cache / "20news-bydate").iterdir()) == ["20news-bydate.tar.gz"]


def test_fetch_url_ending_in_dot_dot_uses_the_default_name(local_server, tmp_path):
    # ".." must not name the cache file (it would be the cache folder's parent).
    www, base = local_server
    (www / "dir").mkdir()
    _write_tar(www / "index.html", NG_FILES)  # what the server sends for /dir/../
    cache = tmp_path / "cache"
    assert len(fetch_20newsgroups(data_home=cache, url=f"{base}/dir/..", sha256=None)) == 3
    assert sorted(p.name for p in (cache / "20news-bydate").iterdir()) == ["20news-bydate.tar.gz"]


def test_fetch_webkb_uses_env_data_home(local_server, tmp_path, monkeypatch):
    www, base = local_server
    _write_tar(www / "webkb-data.gtar.gz", WEBKB_FILES)
    home = tmp_path / "env_home"
    monkeypatch.setenv("KGEO_DATA_HOME", str(home))
    assert get_data_home() == home
    corpus = fetch_webkb(url=f"{base}/webkb-data.gtar.gz")  # sha256=None: not verified
    assert len(corpus) == 7
    assert (home / "webkb" / "webkb-data.gtar.gz").is_file()
    with pytest.raises(ValueError, match="checksum mismatch"):
        fetch_webkb(data_home=tmp_path / "other", url=f"{base}/webkb-data.gtar.gz",
                    sha256="f" * 64)


def test_fetch_webkb_into_a_data_home_named_like_a_class(local_server, tmp_path):
    # The cache <data_home>/webkb/<archive> sat two folders below "project":
    # refused as a page, the download was removed, at every call.
    www, base = local_server
    _write_tar(www / "webkb-data.gtar.gz", WEBKB_FILES)
    home = tmp_path / "project"
    for _ in range(2):  # downloaded, then from the cache
        assert len(fetch_webkb(data_home=home, url=f"{base}/webkb-data.gtar.gz")) == 7
        assert (home / "webkb" / "webkb-data.gtar.gz").is_file()


@pytest.mark.parametrize("name", ["BZh_notes.txt", "BZh91_notes.txt"])
def test_plain_tar_whose_first_member_is_named_like_a_magic_number(tmp_path, name):
    # "BZh..." opens a bzip2 stream only with its full magic number: "BZh9"
    # is bzip2's first four bytes for a block size of 9, so the name that
    # starts "BZh91" is told apart by the "1AY&SY" after them.
    files = {name: b"notes", **NG_FILES}
    path = tmp_path / "plain.tar"
    path.write_bytes(_plain_tar_bytes(files))
    assert path.read_bytes()[:4] == name[:4].encode()
    assert len(load_20newsgroups(path, subset="all")) == 6

# ==========================================================================
# From a mutation review of the loaders' recent code (helper 167: 56
# mutants, 28 killed by the suite, 10 equivalent, 17 gaps, each failing a
# test below)
# ==========================================================================


REVIEW_NG_FILES = {
    "20news-bydate-train/sci.space/10": b"From: a@b\nSubject: orbit\n\nlaunch window\n",
    "20news-bydate-train/alt.atheism/300": b"From: e@f\n\natheism text\n",
    "20news-bydate-test/sci.space/11": b"From: i@j\n\nrocket\n",
    "20news-bydate-test/comp.graphics/12": b"From: k@l\n\npixels\n",
}


def _review_page(title):
    return (b"MIME-Version: 1.0\r\nContent-Type: text/html\r\n\r\n<html><title>" + title
            + b"</title></html>\n")


REVIEW_WEBKB_FILES = {
    "webkb/student/cornell/http:^^www.cs.cornell.edu^~ann^": _review_page(b"Ann"),
    "webkb/faculty/wisconsin/http:^^www.cs.wisc.edu^~eve^": _review_page(b"Eve"),
    "webkb/course/texas/http:^^www.cs.utexas.edu^cs1^": _review_page(b"CS1"),
    "webkb/project/washington/http:^^www.cs.washington.edu^p^": _review_page(b"P"),
}


def _review_tree(root, files):
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content)


# --- archive detection ------------------------------------------------------

@pytest.mark.parametrize("compress, suffix", [(gzip.compress, "gz"), (bz2.compress, "bz2"),
                                              (lzma.compress, "xz"), (bytes, "plain")])
def test_every_supported_compression_loads_a_valid_archive(tmp_path, compress, suffix):
    # Only damaged bz2/xz archives were tested: with xz undetected by
    # _compression (magic[:5] compared with 6 bytes), a valid .tar.xz was
    # refused as "truncated header" and the suite passed.
    path = tmp_path / f"ng.tar.{suffix}"
    path.write_bytes(compress(_plain_tar_bytes(REVIEW_NG_FILES)))
    corpus = load_20newsgroups(path, subset="all")
    assert sorted(corpus.filenames) == sorted(REVIEW_NG_FILES)


@pytest.mark.parametrize("name", ["BZh01AY&SY.txt", "BZhx1AY&SY.txt"])
def test_plain_tar_named_like_bzip2_without_a_block_size_digit_stays_plain(tmp_path, name):
    # "1AY&SY" after "BZh" is not enough: the fourth byte must be 1-9.
    path = tmp_path / "plain.tar"
    path.write_bytes(_plain_tar_bytes({name: b"notes", **REVIEW_NG_FILES}))
    assert path.read_bytes()[:10] == name[:10].encode()
    assert len(load_20newsgroups(path, subset="all")) == len(REVIEW_NG_FILES)


def test_uncompressed_tar_below_a_class_folder_loads(tmp_path):
    # The existing "plain (uncompressed) tar" case wrote it with the suite's
    # _write_tar, which always gzips: _is_archive's tarfile.is_tarfile branch
    # was never exercised (dropping it, or 'or' -> 'and', passed).
    for folder in (tmp_path / "student" / "Downloads",
                   tmp_path / "20news-bydate-train" / "Downloads"):
        folder.mkdir(parents=True)
    webkb = tmp_path / "student" / "Downloads" / "webkb.tar"
    webkb.write_bytes(_plain_tar_bytes(REVIEW_WEBKB_FILES))
    assert len(load_webkb(webkb)) == 4
    ng = tmp_path / "20news-bydate-train" / "Downloads" / "20news-bydate.tar"
    ng.write_bytes(_plain_tar_bytes(REVIEW_NG_FILES))
    assert len(load_20newsgroups(ng, subset="all")) == len(REVIEW_NG_FILES)


def test_damaged_compressed_archive_below_a_class_folder_is_an_archive_error(tmp_path):
    # By its magic number it is an archive, even where tarfile.is_tarfile
    # cannot read its first header: the error is about the archive, not
    # "one of the WebKB files".
    folder = tmp_path / "student" / "Downloads"
    folder.mkdir(parents=True)
    path = folder / "webkb-data.gtar.gz"
    path.write_bytes(gzip.compress(_plain_tar_bytes(REVIEW_WEBKB_FILES))[:40])
    with pytest.raises(ValueError, match="is not a readable tar archive") as info:
        load_webkb(path)
    assert not isinstance(info.value, DatasetNotFoundError)


# --- 20 Newsgroups ----------------------------------------------------------

def test_a_message_of_the_test_split_is_refused_naming_its_folder(tmp_path):
    _review_tree(tmp_path / "ng", REVIEW_NG_FILES)
    path = tmp_path / "ng" / "20news-bydate-test" / "sci.space" / "11"
    expected = (f"{str(path)!r} is one of the 20 Newsgroups files, not the corpus: pass the "
                f"folder holding them, {str(tmp_path / 'ng')!r}, or the archive")
    with pytest.raises(DatasetNotFoundError, match=re.escape(expected)):
        load_20newsgroups(path)


def test_interrupted_copy_counts_only_published_groups(tmp_path):
    # The test split holds the archive's first group; a group of the user's
    # own in training is no published group and is not counted in "first N".
    files = {"20news-bydate-test/alt.atheism/1": b"x\n",
             "20news-bydate-train/alt.atheism/2": b"x\n",
             "20news-bydate-train/my.group/3": b"x\n"}
    _review_tree(tmp_path / "c", files)
    with pytest.warns(IncompleteCorpusWarning, match=r"holds the first 1 of the 20 groups"):
        load_20newsgroups(tmp_path / "c", subset="test")
    # A published group out of the archive's order (sci.space) is not
    # counted either: the copy was said to hold "the first 2".
    files["20news-bydate-train/sci.space/5"] = b"x\n"
    _review_tree(tmp_path / "d", files)
    with pytest.warns(IncompleteCorpusWarning, match=r"holds the first 1 of the 20 groups"):
        load_20newsgroups(tmp_path / "d", subset="all")


# --- WebKB ------------------------------------------------------------------

def test_webkb_tree_of_unknown_universities_only_is_named_in_webkb_subfolder(tmp_path):
    # Class folders of other universities only, in <path>/webkb: the folders
    # are named (warning) and no page is found; without the second search
    # over both roots, a bare "no WebKB corpus" DatasetNotFoundError.
    _review_tree(tmp_path / "data",
                 {"webkb/student/mit/http:^^www.mit.edu^~zed^": _review_page(b"Z")})
    with pytest.warns(UserWarning, match=r"holds folders \['mit'\] that are not among"):
        with pytest.raises(ValueError, match="no WebKB page of classes") as info:
            load_webkb(tmp_path / "data")
    assert not isinstance(info.value, DatasetNotFoundError)


def test_folder_sharing_a_class_name_with_files_only_is_no_webkb_corpus(tmp_path):
    # "project/" holding only files (no university folder, no subfolder) is
    # not a WebKB tree: DatasetNotFoundError naming what was expected.
    (tmp_path / "data" / "project").mkdir(parents=True)
    (tmp_path / "data" / "project" / "notes.txt").write_text("mine")
    with pytest.raises(DatasetNotFoundError, match=r"no WebKB corpus under"):
        load_webkb(tmp_path / "data")


def test_webkb_tree_in_the_folder_itself_comes_before_its_webkb_subfolder(tmp_path):
    _review_tree(tmp_path / "data", {k[len("webkb/"):]: v for k, v in REVIEW_WEBKB_FILES.items()})
    (tmp_path / "data" / "webkb").mkdir()
    (tmp_path / "data" / "webkb" / "webkb-data.gtar.gz").write_bytes(
        gzip.compress(_plain_tar_bytes({"webkb/student/cornell/other": _review_page(b"O")})))
    corpus = load_webkb(tmp_path / "data")
    assert len(corpus) == 4


def test_webkb_pages_with_nul_bytes_warn(tmp_path):
    files = dict(REVIEW_WEBKB_FILES)
    files["webkb/student/cornell/http:^^www.cs.cornell.edu^~ann^"] = (
        "<html>utf-16</html>".encode("utf-16"))
    _review_tree(tmp_path / "t", files)
    with pytest.warns(UserWarning, match=r"^1 document\(s\) hold NUL bytes, such as "
                                         r"'student/cornell/http:\^\^www.cs.cornell.edu\^~ann\^'"):
        corpus = load_webkb(tmp_path / "t")
    assert len(corpus) == 4


# --- 20 Newsgroups: archive and folder agree on the interrupted-copy check --

def test_interrupted_copy_check_is_per_split_in_an_archive_as_in_a_folder(tmp_path):
    # The test split holds the archive's first group: both views warn. (With
    # every archive member's group counted as "train", the archive's union
    # {alt.atheism, sci.space} is no prefix and it loaded silently.)
    files = {"20news-bydate-test/alt.atheism/1": b"x\n",
             "20news-bydate-train/sci.space/2": b"x\n"}
    _review_tree(tmp_path / "tree", files)
    archive = tmp_path / "a.tar"
    archive.write_bytes(_plain_tar_bytes(files))
    for path in (tmp_path / "tree", archive):
        with pytest.warns(IncompleteCorpusWarning, match="20 Newsgroups bydate"):
            load_20newsgroups(path, subset="all")


# --- SMART end-of-file check ----------------------------------------------------

def _adi(**override):
    files = {
        "ADI.ALL": b".I 1\r\n.T\r\nfirst\r\n.W\r\none\r\n.I 2\r\n.W\r\ntwo\r\n",
        "ADI.QRY": b".I 1\r\n.W\r\nwhat?\r\n.I 2\r\n.W\r\nand?\r\n",
        "ADI.REL": b"1 1 0 0.000000\r\n2 2 0 0.000000\r\n",
    }
    files.update(override)
    return files


def _end_warnings(tmp_path, files, what):
    from kgeo.datasets import load_smart
    _review_tree(tmp_path / "adi", files)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        load_smart(tmp_path / "adi", "adi")
    return [str(w.message) for w in record if what in str(w.message)]


def test_smart_tab_after_the_last_line_break_is_no_cut(tmp_path):
    files = _adi(**{"ADI.QRY": _adi()["ADI.QRY"] + b"\t"})
    assert _end_warnings(tmp_path, files, "ADI.QRY") == []


def test_smart_last_record_without_text_is_no_cut_where_another_has_none(tmp_path):
    # Record 1 has no .W field at all: "every other record has the field"
    # does not hold, so a last record without .W is no sign of a cut.
    docs = b".I 1\r\n.T\r\nonly a title\r\n.I 2\r\n.W\r\ntwo\r\n.I 3\r\n.T\r\nthird\r\n"
    assert _end_warnings(tmp_path, _adi(**{"ADI.ALL": docs}), "ADI.ALL") == []


# --- a corpus's own file passed for the corpus, whatever its letter case -----

def test_member_files_are_refused_whatever_their_letter_case(tmp_path):
    from kgeo.datasets import load_reuters21578, load_smart
    _review_tree(tmp_path / "r", {"REUT2-000.SGM": b"<REUTERS>", "adi.qry": b".I 1\n"})
    with pytest.raises(DatasetNotFoundError, match="is one of the Reuters-21578 files"):
        load_reuters21578(tmp_path / "r" / "REUT2-000.SGM")
    with pytest.raises(DatasetNotFoundError, match="is one of the ADI collection's files"):
        load_smart(tmp_path / "r" / "adi.qry", "adi")


# --- from a mutation review (helper 175) ------------------------------------
# Each test below failed on a mutant of kgeo/datasets.py that the suite let
# pass, or (the four after the archives' ones) on a defect it found.

_SPACE = "20news-bydate-train/sci.space"


def _tar_members(path, members, **options):
    """Write [(name, bytes) or (name, (link type, link name))] to a plain tar
    at ``path`` (a path or a BytesIO), in that order: links, repeated names."""
    target = dict(fileobj=path) if isinstance(path, io.BytesIO) else dict(name=path)
    with tarfile.open(mode="w", **target, **options) as tf:
        for name, content in members:
            info = tarfile.TarInfo(name)
            if isinstance(content, tuple):
                info.type, info.linkname = content
                tf.addfile(info)
            else:
                info.size = len(content)
                tf.addfile(info, io.BytesIO(content))
    return path


# --- archives -----------------------------------------------------------------

def test_plain_tar_whose_first_member_is_named_like_gzip_without_deflate(tmp_path):
    """gzip's magic number is three bytes (1f 8b and the deflate method 08):
    a plain tar whose first member's name starts with 1f 8b stays plain.
    (Pins the third byte of the check, as the BZh tests pin bzip2's.)"""
    path = _tar_members(tmp_path / "plain.tar",
                        [("\x1f\udc8b_notes.txt", b"notes"), (f"{_SPACE}/1", b"From: a\n\nx")],
                        format=tarfile.USTAR_FORMAT, encoding="utf-8", errors="surrogateescape")
    assert path.read_bytes()[:3] == b"\x1f\x8b_"
    assert load_20newsgroups(path).filenames == [f"{_SPACE}/1"]


def test_damaged_bzip2_stream_is_a_value_error(tmp_path):
    """bz2 reports a damaged stream as a bare OSError: the loaders turn it
    into the archive's ValueError (the damage tests only damaged the tar
    inside a valid bzip2 stream)."""
    buffer = io.BytesIO()
    _tar_members(buffer, [(f"{_SPACE}/1", b"From: a\n\none"), (f"{_SPACE}/2", b"From: b\n\ntwo")])
    compressed = bytearray(bz2.compress(buffer.getvalue()))
    compressed[len(compressed) // 2] ^= 0x55
    path = tmp_path / "damaged.tar.bz2"
    path.write_bytes(bytes(compressed))
    with pytest.raises(ValueError, match=r"is not a readable tar archive: Invalid data stream"):
        load_20newsgroups(path)


def test_end_marker_across_the_record_tarfile_read_is_read_to_its_end(tmp_path):
    """A tar written without padding to 10 KiB records (``tar -b1``) can have
    its end-of-archive marker straddle the 10,240 bytes tarfile reads at a
    time: the check reads the second zero block itself (a valid archive
    was otherwise "damaged or truncated")."""
    content = b"From: a\n\n" + b"x" * (9216 - 9)
    info = tarfile.TarInfo(f"{_SPACE}/1")
    info.size = len(content)
    tar = info.tobuf(format=tarfile.USTAR_FORMAT) + content + bytes(1024)
    assert len(tar) == 10240 + 512  # the first zero block ends the first 10,240 bytes
    path = tmp_path / "b1.tar"
    path.write_bytes(tar)
    assert load_20newsgroups(path).filenames == [f"{_SPACE}/1"]


@pytest.mark.parametrize("prefix", ["", "./"])
def test_a_file_replacing_a_link_is_what_later_links_reach(tmp_path, prefix):
    """Member 2 is first a link to 1, then a file of its own; link 3 -> 2
    then reads file 2, as GNU tar extracts it (the old link's target, 1,
    was read before: the link had to be forgotten). With "./" the file is
    the link's path under another name (review 179's mutant D11: the stale
    link, keyed by path, was popped by the raw name and still followed)."""
    path = _tar_members(tmp_path / "relinked.tar", [
        (f"{_SPACE}/1", b"From: a\n\none"),
        (f"{_SPACE}/2", (tarfile.SYMTYPE, "1")),
        (f"{prefix}{_SPACE}/2", b"From: b\n\ntwo"),
        (f"{_SPACE}/3", (tarfile.SYMTYPE, "2")),
    ])
    corpus = load_20newsgroups(path)
    assert corpus.data == ["From: a\n\none", "From: b\n\ntwo", "From: b\n\ntwo"]


def test_a_cycle_of_links_in_an_archive_is_an_error_not_a_hang(tmp_path):
    """Links 1 -> 2 -> 1 reach no file: a ValueError naming the link (following
    them without remembering the names seen looped for ever)."""
    path = _tar_members(tmp_path / "cycle.tar", [(f"{_SPACE}/1", (tarfile.SYMTYPE, "2")),
                                                 (f"{_SPACE}/2", (tarfile.SYMTYPE, "1"))])
    with pytest.raises(ValueError, match=r"member '20news-bydate-train/sci.space/1' is a "
                                         r"symbolic link to '2', which is not a regular file"):
        load_20newsgroups(path)


def test_second_pass_reads_only_regular_members_of_a_missing_target(tmp_path):
    """A link's target that the first pass skipped is read in a second pass;
    there a link of the target's name (which a later file replaced) must be
    passed over: tarfile cannot extract a link from a stream."""
    train = "20news-bydate-train/sci.space"
    path = _tar_members(tmp_path / "second.tar", [
        ("20news-bydate-test/sci.space/1", (tarfile.SYMTYPE, f"../../{train}/7")),
        (f"{train}/7", (tarfile.SYMTYPE, "8")),
        (f"{train}/8", b"From: e\n\neight"),
        (f"{train}/7", b"From: s\n\nseven"),
    ])
    assert load_20newsgroups(path, subset="test").data == ["From: s\n\nseven"]


# --- 20 Newsgroups: warnings about copies other than the published one --------

_NG__SPACES = sorted(kgeo.datasets._NG_BYDATE_COUNTS)


def test_20newsgroups_all_groups_split_out_of_the_archives_order_say_the_20_groups(tmp_path):
    """The 20 groups, but neither split's groups the first ones of the
    archive's order: the warning says "the 20 groups", not "the first 0"."""
    files = {f"20news-bydate-{'train' if i % 2 == 0 else 'test'}/{g}/{i}": b"From: a\n\nx\n"
             for i, g in enumerate(_NG__SPACES)}
    _write_tree(tmp_path / "split", files)
    with pytest.warns(IncompleteCorpusWarning) as record:
        load_20newsgroups(tmp_path / "split", subset="all")
    assert " holds the 20 groups of 20 Newsgroups bydate but not its published messages: " \
        "10 of 11,314 train messages; 10 of 7,532 test messages; " in str(record[0].message)


def test_a_list_of_exactly_the_shown_length_has_no_and_more(tmp_path, monkeypatch):
    """Warnings list up to a few names, then "and N more": exactly that many
    (here 3 missing Reuters files) are all named, with no "and 0 more"."""
    monkeypatch.setattr(kgeo.datasets, "_REUTERS_STORIES_PER_FILE",
                        {f"reut2-{i:03d}.sgm": 1 for i in range(4)})
    story = ('<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" NEWID="1">\n<TOPICS><D>earn</D>'
             '</TOPICS>\n<TEXT><TITLE>T</TITLE><BODY>b</BODY></TEXT>\n</REUTERS>\n')
    _write_tree(tmp_path / "r", {"reut2-000.sgm": story.encode()})
    with pytest.warns(IncompleteCorpusWarning) as record:
        load_reuters21578(tmp_path / "r")
    assert "files missing (reut2-001.sgm, reut2-002.sgm, reut2-003.sgm). " in str(
        record[0].message)


# --- SMART collections ----------------------------------------------------------

def test_smart_ids_up_to_int64_max_load(tmp_path):
    """The largest int64, 9223372036854775807, is a valid id (one more is
    refused, as the suite pins): the range check's upper end is inclusive."""
    biggest = 2**63 - 1
    files = dict(_adi(), **{
        "ADI.ALL": _crlf(f".I 1\n.W\none\n.I {biggest}\n.W\ntwo\n"),
        "ADI.REL": _crlf(f"1 {biggest} 0 0.000000\n"),
    })
    _write_tree(tmp_path / "adi", files)
    collection = load_smart(tmp_path / "adi", "adi")
    assert collection.doc_ids.tolist() == [1, biggest]
    assert collection.qrels == {1: frozenset({biggest})}


def test_smart_files_named_like_the_subfolders_looked_in_are_passed_over(tmp_path):
    """A file named ir-classic (or adi) where a subfolder is looked for is no
    folder to list: the collection in adi/ loads, and a folder with neither
    is a DatasetNotFoundError, not a NotADirectoryError."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "ir-classic").write_text("notes")
    _write_tree(tmp_path / "data" / "adi", _adi())
    assert load_smart(tmp_path / "data", "adi").doc_ids.tolist() == [1, 2]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "adi").write_text("notes")
    with pytest.raises(kgeo.datasets.DatasetNotFoundError, match="no ADI collection under"):
        load_smart(tmp_path / "other", "adi")


# --- Reuters-21578 ----------------------------------------------------------------

def _review_story(newid, body="b", close=True):
    """A Reuters story, its </REUTERS> left out with ``close=False``."""
    return (f'<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" NEWID="{newid}">\n<TOPICS><D>earn</D>'
            f'</TOPICS>\n<TEXT><TITLE>T{newid}</TITLE><BODY>{body}</BODY></TEXT>\n'
            + ("</REUTERS>\n" if close else ""))


def test_reuters_files_in_the_folder_itself_come_before_its_reuters21578_subfolder(tmp_path):
    """A folder holding reut2-*.sgm loads those, not the reuters21578/ beside
    them (as 20 Newsgroups and WebKB look in the folder itself first)."""
    _write_tree(tmp_path / "data", {"reut2-000.sgm": _review_story(1).encode(),
                                    "reuters21578/reut2-000.sgm": _review_story(2).encode()})
    assert load_reuters21578(tmp_path / "data").newids.tolist() == [1]


@pytest.mark.parametrize("name", ["reuters21578.tgz", "reuters21578.tar"])
def test_reuters_folder_holding_an_archive_of_another_name(tmp_path, name):
    """The three archive names are looked for, as for 20 Newsgroups and SMART."""
    holder = tmp_path / "holder"
    holder.mkdir()
    _tar_members(holder / name, [("reuters21578/reut2-000.sgm", _review_story(1).encode())])
    assert load_reuters21578(holder).newids.tolist() == [1]


def test_reuters_last_surrogate_reference_is_dropped(tmp_path):
    """Surrogates run to U+DFFF inclusive: &#57343; is dropped like &#55296;
    (a lone surrogate cannot be encoded)."""
    _write_tree(tmp_path / "r", {"reut2-000.sgm": _review_story(1, "a&#57343;b&#57344;c").encode()})
    text = load_reuters21578(tmp_path / "r").data[0]
    assert text == "T1\nab\ue000c"
    text.encode("utf-8")


def test_reuters_unclosed_story_after_several_stray_closing_tags_is_named(tmp_path):
    """Stray </REUTERS> tags before the stories are all skipped: the first
    story that lacks its </REUTERS> (NEWID 1) is the one named, not the next."""
    text = "</REUTERS>\n</REUTERS>\n" + "".join(_review_story(i, close=False) for i in (1, 2, 3))
    _write_tree(tmp_path / "r", {"reut2-000.sgm": text.encode()})
    with pytest.raises(ValueError, match=r"reut2-000.sgm: the <REUTERS> element with "
                                         r"attributes \{.*'NEWID': '1'\} is not closed"):
        load_reuters21578(tmp_path / "r")


def test_reuters_open_tag_without_its_end_does_not_swallow_the_next_review_story(tmp_path):
    """An open tag lacking its ">" up to its </REUTERS> makes the element's
    pattern run on into the next story: refused, naming that element,
    rather than read as one story with the next one's text."""
    broken = '<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" NEWID="1" </REUTERS>\n'
    _write_tree(tmp_path / "r", {"reut2-000.sgm": (broken + _review_story(2)).encode()})
    with pytest.raises(ValueError, match=r"reut2-000.sgm: the <REUTERS> element with "
                                         r"attributes \{.*'NEWID': '1'\} is not closed before "
                                         r"the next <REUTERS>"):
        load_reuters21578(tmp_path / "r")


# --- fetchers ---------------------------------------------------------------------

def test_empty_kgeo_data_home_means_the_default_folder(tmp_path, monkeypatch):
    """KGEO_DATA_HOME set but empty (``export KGEO_DATA_HOME=``) is unset:
    ~/kgeo_data, not an "empty path" error."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("KGEO_DATA_HOME", "")
    assert get_data_home() == tmp_path / "kgeo_data"
    assert (tmp_path / "kgeo_data").is_dir()


# --- arguments ----------------------------------------------------------------------

def test_a_one_element_array_is_no_subset_name(tmp_path):
    """``np.array(["train"]) in ("train", "test", "all")`` is True (NumPy
    compares element-wise): only a str is taken as a subset name, so the
    array is refused by name instead of loading with an array as ``subset``."""
    path = _tar_members(tmp_path / "ng.tar", [(f"{_SPACE}/1", b"From: a\n\nx")])
    with pytest.raises(ValueError, match=r"subset must be one of \['train', 'test', 'all'\], "
                                         r"got array\(\['train'\]"):
        load_20newsgroups(path, subset=np.array(["train"]))


def _closed_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_fetch_accepts_https_addresses(tmp_path):
    """https:// is as valid as http://: the download is attempted (here it
    fails, nothing listens on the port of 127.0.0.1), not refused as an
    address of the wrong scheme."""
    url = f"https://127.0.0.1:{_closed_port()}/20news-bydate.tar.gz"
    with pytest.raises(OSError, match=r"could not download https://127\.0\.0\.1"):
        kgeo.datasets.fetch_20newsgroups(data_home=tmp_path / "cache", url=url, sha256=None,
                                         timeout=5)


@pytest.mark.parametrize("url", [None, b"http://127.0.0.1/20news-bydate.tar.gz"])
def test_fetch_refuses_a_url_that_is_not_a_str(tmp_path, url):
    """A url of another type is a TypeError naming it, before any other step."""
    with pytest.raises(TypeError, match=rf"url must be a str, got {type(url).__name__}"):
        kgeo.datasets.fetch_20newsgroups(data_home=tmp_path / "cache", url=url, sha256=None)


def test_an_archive_that_cannot_be_opened_keeps_its_permission_error(tmp_path, monkeypatch):
    """An archive the user may not read is a PermissionError (as open() gives),
    not "not a readable tar archive", which would send them to re-download it.
    (Simulated: the suite may run as root, who reads every file.)"""
    path = _tar_members(tmp_path / "ng.tar", [(f"{_SPACE}/1", b"From: a\n\nx")])

    def refused(archive):
        raise PermissionError(13, "Permission denied", str(archive))
    monkeypatch.setattr(kgeo.datasets, "_open_decompressed", refused)
    with pytest.raises(PermissionError):
        load_20newsgroups(path)


# --- defects the review found ---------------------------------------------------

def test_links_in_an_archive_of_dot_slash_names_load(tmp_path):
    """``tar -C folder -czf x.tar.gz .`` names every member "./...": a symbolic
    link there was refused as "a symbolic link to '1', which is not a
    regular file of the archive" (its target was normalised, the member
    names were not); the same files in a folder, or archived without "./",
    load."""
    path = _tar_members(tmp_path / "dot.tar", [
        (f"./{_SPACE}/1", b"From: a\n\none"),
        (f"./{_SPACE}/2", (tarfile.SYMTYPE, "1")),
        (f"./{_SPACE}/3", (tarfile.LNKTYPE, f"./{_SPACE}/1")),
        (f"./{_SPACE}/4", (tarfile.SYMTYPE, "./3")),
    ])
    corpus = load_20newsgroups(path)
    assert corpus.filenames == [f"{_SPACE}/{i}" for i in (1, 2, 3, 4)]
    assert corpus.data == ["From: a\n\none"] * 4


def test_message_order_does_not_depend_on_member_or_listing_order(tmp_path):
    """Files "12" and "012" of a group are both messages with id 12: their
    order followed the archive's member order (and a folder's listing
    order, which the file system chooses); ties now go by file name."""
    orders = []
    for i, members in enumerate(([(f"{_SPACE}/012", b"A"), (f"{_SPACE}/12", b"B")],
                                 [(f"{_SPACE}/12", b"B"), (f"{_SPACE}/012", b"A")])):
        orders.append(load_20newsgroups(_tar_members(tmp_path / f"{i}.tar", members)).filenames)
    assert orders[0] == orders[1] == [f"{_SPACE}/012", f"{_SPACE}/12"]


def test_smart_folder_with_two_files_of_one_name_in_other_cases_is_refused(tmp_path):
    """A folder holding ADI.ALL and adi.all (a case-sensitive file system) gave
    whichever the listing named last, silently; an archive holding both is
    refused ("holds the same document twice"). Both now refuse."""
    files = {"ADI.ALL": b".I 1\r\n.W\r\none\r\n", "ADI.QRY": b".I 1\r\n.W\r\nq\r\n",
             "ADI.REL": b"1 1 0 0.000000\r\n", "adi.all": b".I 1\r\n.W\r\nother\r\n"}
    _write_tree(tmp_path / "adi", files)
    if len(list((tmp_path / "adi").iterdir())) < 4:
        pytest.skip("case-insensitive file system")
    with pytest.raises(ValueError, match=r"ADI.ALL.*adi.all|adi.all.*ADI.ALL"):
        load_smart(tmp_path / "adi", "adi")
    # A link of the other case to the same file is that file, not a second
    # one (a review: the first version refused it).
    (tmp_path / "adi" / "adi.all").unlink()
    (tmp_path / "adi" / "adi.all").symlink_to("ADI.ALL")
    assert load_smart(tmp_path / "adi", "adi").documents == ["one"]


def test_smart_records_many_are_parsed_and_a_repeated_id_far_back_is_found(tmp_path):
    """The repeated-record check compared each .I number with every earlier
    one (``ids[-1] in ids[:-1]``: 40,000 records took 8 s, 60,000 about
    23 s, a seeming hang); it keeps the ids seen in a set, and a repeat of
    the first id 20,000 records later is still refused."""
    n = 20_000
    docs = "".join(f".I {i}\r\n.W\r\nword {i}\r\n" for i in range(1, n + 1))
    _write_tree(tmp_path / "adi", _adi(**{"ADI.ALL": docs.encode()}))
    assert len(load_smart(tmp_path / "adi", "adi").doc_ids) == n
    repeated = docs + ".I 1\r\n.W\r\nagain\r\n"
    _write_tree(tmp_path / "adi", _adi(**{"ADI.ALL": repeated.encode()}))
    with pytest.raises(ValueError, match=r"record \.I 1 appears twice"):
        load_smart(tmp_path / "adi", "adi")


# --- member paths ("./a" and "a" are one file; a review of d1e4428) ---------

def _extracted(tmp_path, path):
    """The archive extracted by tarfile: what the loader's reading mirrors."""
    folder = tmp_path / "extracted"
    with tarfile.open(path) as tf:
        tf.extractall(folder, **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))
    return folder


def test_a_dot_slash_member_and_a_plain_one_are_one_file_the_later_wins(tmp_path):
    """"./S/1" then "S/1": tar extracts one file, the later; the loader
    reads that one, not "the same document twice" (review 179's mutant D12: the claim keyed on
    the raw name refused it)."""
    path = _tar_members(tmp_path / "a.tar", [
        (f"./{_SPACE}/1", b"From: a\n\nA"),
        (f"{_SPACE}/1", b"From: b\n\nB"),
    ])
    corpus = load_20newsgroups(path)
    assert corpus.data == ["From: b\n\nB"]
    assert load_20newsgroups(_extracted(tmp_path, path)).data == corpus.data


def test_a_dot_slash_link_replacing_a_plain_file_reads_its_target(tmp_path):
    """Link "./S/2" -> "1" replaces file "S/2" (review 179's mutant D09: the link's claim keyed
    on its raw name was refused as the same document twice)."""
    path = _tar_members(tmp_path / "a.tar", [
        (f"{_SPACE}/1", b"From: a\n\nA"),
        (f"{_SPACE}/2", b"From: b\n\nB"),
        (f"./{_SPACE}/2", (tarfile.SYMTYPE, "1")),
    ])
    corpus = load_20newsgroups(path)
    assert corpus.data == ["From: a\n\nA", "From: a\n\nA"]
    assert load_20newsgroups(_extracted(tmp_path, path)).data == corpus.data


def test_a_file_replaced_by_a_dot_slash_link_in_a_cycle_is_no_target(tmp_path):
    """File "S/1", then link "./S/1" -> "x" and link "S/x" -> "1" ("x" is no
    message name, so only "./S/1" is resolved): a cycle with no file in it
    (extracted, reading S/1 is ELOOP). The replaced file must be forgotten
    (review 179's mutant D06, D07: it stayed among the regular files by its path, and the cycle
    resolved to its old text)."""
    path = _tar_members(tmp_path / "a.tar", [
        (f"{_SPACE}/1", b"From: a\n\nold"),
        (f"./{_SPACE}/1", (tarfile.SYMTYPE, "x")),
        (f"{_SPACE}/x", (tarfile.SYMTYPE, "1")),
    ])
    with pytest.raises(ValueError, match=r"member '\./20news-bydate-train/sci\.space/1' is a "
                                         r"symbolic link to 'x', which is not a regular file"):
        load_20newsgroups(path)


def test_a_link_to_a_dot_slash_member_of_another_subset_is_read_in_the_second_pass(tmp_path):
    """Test message 5 links to training message "./.../1", which subset="test"
    does not read in the first pass (review 179's mutant D15, D16: the second pass compared or
    stored raw names, so the target was never found: KeyError)."""
    path = _tar_members(tmp_path / "a.tar", [
        ("./20news-bydate-test/sci.space/5",
         (tarfile.SYMTYPE, "../../20news-bydate-train/sci.space/1")),
        ("./20news-bydate-train/sci.space/1", b"From: a\n\none"),
    ])
    assert load_20newsgroups(path, subset="test").data == ["From: a\n\none"]
    assert load_20newsgroups(_extracted(tmp_path, path), subset="test").data == ["From: a\n\none"]


def test_a_link_to_a_dot_slash_file_read_before_needs_no_second_pass(tmp_path, monkeypatch):
    """The target "./S/1" was kept in the first pass: the link takes its bytes
    from there, the archive is decompressed once (review 179's mutant D13: kept under its raw
    name, it was looked for again in a second pass over the archive)."""
    path = _tar_members(tmp_path / "a.tar", [
        (f"./{_SPACE}/1", b"From: a\n\none"),
        (f"{_SPACE}/2", (tarfile.SYMTYPE, "1")),
    ])
    passes = []
    real = kgeo.datasets._stream_tar

    def counted(archive, on_member):
        passes.append(archive)
        return real(archive, on_member)
    monkeypatch.setattr(kgeo.datasets, "_stream_tar", counted)
    assert load_20newsgroups(path).data == ["From: a\n\none"] * 2
    assert len(passes) == 1


def test_a_hard_link_whose_target_name_has_a_dot_component_loads(tmp_path):
    """A hard link's target "S/./1" is member "S/1", as tar extracts it
    (review 179's mutant D27: only a leading "./" was dropped)."""
    path = _tar_members(tmp_path / "a.tar", [
        (f"{_SPACE}/1", b"From: a\n\none"),
        (f"{_SPACE}/2", (tarfile.LNKTYPE, f"{_SPACE}/./1")),
    ])
    corpus = load_20newsgroups(path)
    assert corpus.data == ["From: a\n\none"] * 2
    assert load_20newsgroups(_extracted(tmp_path, path)).data == corpus.data


def test_same_document_twice_names_the_members_as_the_archive_lists_them(tmp_path):
    """A review of d1e4428: "./a/S/1" and "./b/S/1" were named 'a/S/1' and
    'b/S/1', names ``tar tf`` does not list (the claim compares paths and
    must still name the members)."""
    path = _tar_members(tmp_path / "a.tar", [
        (f"./a/{_SPACE}/1", b"From: a\n\nA"),
        (f"./b/{_SPACE}/1", b"From: b\n\nB"),
    ])
    with pytest.raises(ValueError,
                       match=rf"as members '\./a/{_SPACE}/1' and '\./b/{_SPACE}/1'"):
        load_20newsgroups(path)
