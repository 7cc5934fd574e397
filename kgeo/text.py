"""Bag-of-words counts the way Rainbow (McCallum's bow toolkit) makes them.

The experiments kgeo reproduces (Joachims 1998; Lafferty & Lebanon 2005;
Zhang et al. 2005) built their document vectors with Rainbow. This module
follows the choices of its default lexer, read from the libbow sources
(``lex-simple.c``, ``lex-html.c``, ``scan.c``, ``stopwords.c``, ``opts.c``,
``wi2dvf.c``, ``words.c``), so that vocabulary sizes and counts are comparable.
"""

import collections.abc
import numbers
import re
from collections import Counter

import numpy as np
import scipy.sparse as sp

from ._stoplist import SMART_STOPLIST
from ._validation import check_ordered, is_data_frame
from .exceptions import not_fitted_error, parameter_errors

__all__ = ["RainbowVectorizer"]

# Rainbow's -h scans forward to the string "\n\n", skipping carriage returns
# between the two newlines (scan.c: "so we can match MIME headers like
# \r\n\r\n"); a leading newline of the file also counts as the first "\n".
_HEADER_END = re.compile(r"\A\r*\n|\n\r*\n")
# Rainbow's -H lexer (lex-html.c) reads a page once, left to right: text from
# a "<" to the next ">" is ignored (an unclosed "<" hides the rest of the
# page), and a character entity is decoded where it stands, inside tags too.
# "&lt;" and "&gt;" decode to "<" and ">" and so open and close a tag
# themselves ("&lt;a@b.edu&gt;" hides the address; "&gt;" in an attribute
# ends its tag). Every other entity it knows (case-sensitive, as its lookup
# table is) decodes to a separator. A numeric reference "&#N;" is a separator
# too: lex-html.c computes N, then overwrites it with the first character
# after the digits, which it takes as it is (a letter starts a word, a "<"
# opens a tag, a "&" is not decoded: "&#&lt;" gives the word "lt"). An entity
# counts only when its ";" is the first one after the "&" and at most six
# characters on (the longest name): "&#000065;" is not one.
_HTML_NAMED_ENTITIES = (
    "nbsp", "quot", "amp", "lt", "gt", "iexcl", "cent", "pound", "yen", "brvbar", "sect",
    "copy", "laquo", "raquo", "not", "reg", "deg", "plusmn", "sup2", "sup3", "micro",
    "para", "sup1", "middot", "frac14", "frac12", "iquest", "frac34", "aelig", "aacute",
    "acirc", "agrave", "aring", "atilde", "auml", "ccedil", "eth", "eacute", "ecirc",
    "egrave", "euml", "iacute", "icirc", "igrave", "iuml", "ntilde", "oacute", "ocirc",
    "ograve", "oslash", "otilde", "ouml", "thorn", "uacute", "ucirc", "ugrave", "uuml",
    "yacute", "szlig", "yuml",
)
_HTML_ENTITY_NAMES = "|".join(sorted(_HTML_NAMED_ENTITIES, key=len, reverse=True))
# Pages without "&lt;", "&gt;" or "&#" read the same with the tags removed
# first and the entities after, by two C-speed substitutions instead of a
# Python loop over every tag (ten times slower on markup-dense pages).
_HTML_TAG = re.compile(r"<[^>]*>?")
_HTML_NAMED_ENTITY = re.compile(f"&(?:{_HTML_ENTITY_NAMES});")
_HTML_MARKUP = re.compile(
    rf"(<|&lt;)|(>|&gt;)|&#(?=[^;]{{0,5}};)\d*[;&]?|&(?:{_HTML_ENTITY_NAMES});")
_DIGIT_TAG = "<DIGITS{}>"
# Longest word length accepted: the lexer's regular expressions count up to it.
_MAX_WORD_LENGTH = 2**31 - 1


def _without_html(doc):
    """The text Rainbow's -H lexer reads words from: tags and entities become
    separators, in one pass so that "&lt;" and "&gt;" open and close tags."""
    if "&lt;" not in doc and "&gt;" not in doc and "&#" not in doc:
        return _HTML_NAMED_ENTITY.sub(" ", _HTML_TAG.sub(" ", doc))
    pieces = []
    in_tag = False
    start = 0
    for match in _HTML_MARKUP.finditer(doc):
        if not in_tag:
            pieces.append(doc[start:match.start()])
        pieces.append(" ")
        if match.group(1) is not None:
            in_tag = True
        elif match.group(2) is not None:
            in_tag = False
        start = match.end()
    if not in_tag:
        pieces.append(doc[start:])
    return "".join(pieces)


@parameter_errors()
def _check_count_threshold(value, name):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be None or an integer >= 0, got {value!r}")
    return int(value)


def _check_docs(docs, name="raw_documents"):
    if isinstance(docs, (str, bytes)):
        raise TypeError(
            f"{name} must be an iterable of str documents, got a single "
            f"{type(docs).__name__}; wrap it in a list")
    if is_data_frame(docs):
        # Iterating over a data frame gives its column names: three
        # documents became the one document "text".
        raise TypeError(
            f"{name} must be an iterable of str documents, got a data frame "
            f"({type(docs).__name__}); pass its text column, such as df['text']")
    if isinstance(docs, collections.abc.Mapping):
        # Iterating over a mapping gives its keys: titles, say, counted as
        # the documents while their texts went unread.
        raise TypeError(
            f"{name} must be an iterable of str documents, got a mapping "
            f"({type(docs).__name__}), whose iteration gives its keys; pass its "
            f"values (list(docs.values())) or its keys explicitly")
    check_ordered(docs, name)  # the rows of the counts follow its order
    try:
        docs = list(docs)
    except TypeError:
        raise TypeError(
            f"{name} must be an iterable of str documents, got "
            f"{type(docs).__name__}") from None
    for i, doc in enumerate(docs):
        if not isinstance(doc, str):
            hint = " (decode bytes first, e.g. as latin-1)" if isinstance(doc, bytes) else ""
            raise TypeError(
                f"{name}[{i}] must be a str, got {type(doc).__name__}{hint}")
    return docs


class RainbowVectorizer:
    """Convert documents to word counts with Rainbow's default lexer.

    Tokens are maximal runs of ASCII letters (A-Z, a-z; every other character,
    including digits, accented Latin-1 letters and apostrophes, separates
    tokens), lower-cased, kept when their length is in
    ``[min_word_length, max_word_length]`` (Rainbow tosses words shorter than 2
    and longer than 99 characters) and not in the stop list. This is
    ``bow_lexer_simple_get_raw_word`` (``isalpha`` in the C locale, then
    ``tolower``) and ``bow_lexer_simple_postprocess_word`` of libbow, without
    stemming (Rainbow's default). As libbow's lexer, which reads a document
    as a C string, a document ends at its first NUL character (after the
    header that ``skip_header`` drops).

    Parameters
    ----------
    stoplist : {"smart"}, collection of str or None, default="smart"
        Words to drop after lower-casing. ``"smart"`` is Rainbow's built-in
        SMART list (:data:`kgeo._stoplist.SMART_STOPLIST`, 523 words); None
        keeps every word (Rainbow's ``--no-stoplist``); a collection (list,
        tuple, set, ...) gives your own list, lower-cased. A one-shot
        iterator is refused: a second fit would find it empty.
    skip_header : bool, default=False
        Drop everything up to and including the first blank line, as
        Rainbow's ``--skip-header`` (``-h``) does for mail and news headers;
        it also removes the HTTP header of WebKB pages. A blank line is two
        newlines with only carriage returns between them, so CRLF files work,
        and a document that begins with a newline has an empty header. As in
        Rainbow, a document without any blank line is all header and yields
        no token.
    skip_html : bool, default=False
        Ignore text from each ``<`` to the next ``>`` (an unclosed ``<`` hides
        the rest of the document), as Rainbow's ``--skip-html`` (``-H``)
        lexer does. A tag separates words. The character entities that
        Rainbow's HTML lexer knows (``&amp;``, ``&nbsp;``, ``&eacute;``, ...,
        lower-case names only) and numeric references (``&#65;``) are
        separators, so their names are not lexed as words. As in Rainbow,
        ``&lt;`` and ``&gt;`` open and close a tag like ``<`` and ``>``:
        ``"Ann &lt;ann@cs.edu&gt; wrote"`` gives ``["ann", "wrote"]``.
    tag_digits : bool, default=False
        Also keep runs of ASCII digits, each replaced by a token naming its
        length: ``"1998"`` -> ``"<DIGITS4>"``, ``"7"`` -> ``"<DIGITS1>"``.
        Letters and digits still separate each other (``"mp3"`` gives
        ``"mp"`` and ``"<DIGITS1>"``); digit tags ignore the stop list and the
        word-length limits. The tags cannot collide with words, which hold
        only lower-case letters. This is kgeo's version of a "tagdigits" lex
        pipe for Rainbow's ``--lex-pipe-command``; Rainbow itself ships none.
    prune_by_doc_count : int or None, default=None
        Remove words that occur in this many or fewer training documents.
        Rainbow's ``--prune-vocab-by-doc-count=N`` is documented as "Remove
        words that occur in N or fewer documents." (``opts.c``) and
        implemented by ``bow_wi2dvf_hide_words_by_doc_count``, which hides a
        word when its document count is ``<= N``. None or 0 prunes nothing.
    prune_by_occur_count : int or None, default=None
        Remove words that occur fewer than this many times in the training
        documents. Rainbow's ``--prune-vocab-by-occur-count=N`` is documented
        as "Remove words that occur less than N times." (``opts.c``) and
        ``bow_words_remove_occurrences_less_than`` keeps a word when its count
        is ``>= N``. None or 0 prunes nothing.
    min_word_length : int, default=2
        Shortest alphabetic token kept (Rainbow's ``--shortest-word``,
        default 2).
    max_word_length : int, default=99
        Longest alphabetic token kept (libbow's
        ``bow_lexer_toss_words_longer_than``, 99).
    dtype : numpy dtype, default=np.float64
        Element type of the count matrices.

    Attributes
    ----------
    vocabulary_ : dict of str to int
        Column of each word, words numbered in sorted order.
    document_frequency_ : ndarray of shape (n_features,), dtype int64
        Number of training documents holding each word.
    occurrence_count_ : ndarray of shape (n_features,), dtype int64
        Number of times each word occurs in the training documents.
    n_documents_fit_ : int
        Number of training documents.

    Notes
    -----
    The vocabulary and its pruning are learned by ``fit`` from the training
    documents only; ``transform`` ignores words outside it. (Rainbow prunes by
    occurrence count over every indexed file and by document count over its
    whole document barrel, test documents included; learning on the training
    set alone is the leak-free choice for experiments.)

    Examples
    --------
    >>> vec = RainbowVectorizer()
    >>> X = vec.fit_transform(["The cat sat on the mat.", "A cat's hat"])
    >>> sorted(vec.vocabulary_)
    ['cat', 'hat', 'mat', 'sat']
    >>> X.toarray()
    array([[1., 0., 1., 1.],
           [1., 1., 0., 0.]])
    """

    def __init__(self, stoplist="smart", skip_header=False, skip_html=False, tag_digits=False,
                 prune_by_doc_count=None, prune_by_occur_count=None, min_word_length=2,
                 max_word_length=99, dtype=np.float64):
        self.stoplist = stoplist
        self.skip_header = skip_header
        self.skip_html = skip_html
        self.tag_digits = tag_digits
        self.prune_by_doc_count = prune_by_doc_count
        self.prune_by_occur_count = prune_by_occur_count
        self.min_word_length = min_word_length
        self.max_word_length = max_word_length
        self.dtype = dtype

    # -- scikit-learn's parameter protocol, so that clone() and grids work --

    _PARAMS = ("stoplist", "skip_header", "skip_html", "tag_digits", "prune_by_doc_count",
               "prune_by_occur_count", "min_word_length", "max_word_length", "dtype")

    def get_params(self, deep=True):
        """Parameters of this vectorizer, as passed to ``__init__``.

        Parameters
        ----------
        deep : bool, default=True
            Unused (a vectorizer holds no sub-estimators); kept for the API.

        Returns
        -------
        params : dict
        """
        return {name: getattr(self, name) for name in self._PARAMS}

    def set_params(self, **params):
        """Set parameters of this vectorizer, as ``__init__`` names them.

        Parameters
        ----------
        **params : dict
            New values by parameter name; an unknown name raises
            ``ValueError`` listing the valid ones.

        Returns
        -------
        self : RainbowVectorizer
        """
        for name, value in params.items():
            if name not in self._PARAMS:
                raise ValueError(
                    f"invalid parameter {name!r} for RainbowVectorizer; valid "
                    f"parameters are {list(self._PARAMS)}")
            setattr(self, name, value)
        return self

    def __sklearn_tags__(self):
        # Called only by scikit-learn (imported by then). Without it,
        # is_classifier() and get_tags() raised AttributeError on this class.
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(),
                    input_tags=InputTags(two_d_array=False, string=True))

    def __repr__(self):
        defaults = RainbowVectorizer().get_params()
        changed = [f"{name}={value!r}" for name, value in self.get_params().items()
                   if repr(value) != repr(defaults[name])]
        return f"RainbowVectorizer({', '.join(changed)})"

    # -- the lexer ---------------------------------------------------------

    @parameter_errors()
    def _lexer(self):
        """Validate the lexing parameters; return ``(prepare, find, keep)``.

        ``prepare(doc)`` applies header and HTML skipping, ``find(text)`` lists
        the candidate runs (letters, and digits with ``tag_digits``), and
        ``keep(run)`` returns the token a run counts as, or None when it is
        dropped. ``transform`` and ``tokenize`` share them, so they agree.
        """
        stoplist = self.stoplist
        if isinstance(stoplist, str):
            if stoplist != "smart":
                raise ValueError(
                    f"stoplist must be 'smart', None or an iterable of words, got {stoplist!r}")
            stop = SMART_STOPLIST
        elif stoplist is None:
            stop = frozenset()
        else:
            if isinstance(stoplist, (bytes, bytearray)):
                raise TypeError(
                    f"stoplist must be 'smart', None or a collection of str words, got "
                    f"{type(stoplist).__name__}")
            if isinstance(stoplist, collections.abc.Iterator):
                # A generator or other one-shot iterator would be empty from
                # the second fit (or tokenize) on: stop words back.
                raise TypeError(
                    f"stoplist must be a collection of words (a list, set, ...), got a "
                    f"one-shot iterator ({type(stoplist).__name__})")
            try:
                words = list(stoplist)
            except TypeError:
                raise TypeError(
                    f"stoplist must be 'smart', None or an iterable of words, got "
                    f"{type(stoplist).__name__}") from None
            bad = [w for w in words if not isinstance(w, str)]
            if bad:
                raise TypeError(f"stoplist words must be str, got {bad[0]!r}")
            stop = frozenset(w.lower() for w in words)
        for name in ("skip_header", "skip_html", "tag_digits"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")
        lo, hi = self.min_word_length, self.max_word_length
        for name, value in (("min_word_length", lo), ("max_word_length", hi)):
            if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
                    or not 1 <= value <= _MAX_WORD_LENGTH):
                raise ValueError(
                    f"{name} must be an integer in [1, {_MAX_WORD_LENGTH}], got {value!r}")
        if lo > hi:
            raise ValueError(
                f"min_word_length ({lo}) must not exceed max_word_length ({hi})")
        lo, hi = int(lo), int(hi)
        skip_header, skip_html = bool(self.skip_header), bool(self.skip_html)

        # Runs shorter than lo never match, and a run of lo or more letters
        # matches whole, so [A-Za-z]{lo,} finds exactly the maximal runs of
        # length >= lo; keep() drops the ones longer than hi.
        digits = "|[0-9]+" if self.tag_digits else ""
        find_mixed = re.compile(f"[A-Za-z]{{{lo},}}{digits}").findall
        find_lower = re.compile(f"[a-z]{{{lo},}}{digits}").findall

        def find(text):
            # Lower-casing an ASCII text first is the fast path (one C call).
            # Other texts are searched as they are and only the runs found
            # are lower-cased (in keep): str.lower() maps a few non-ASCII
            # letters to ASCII ones (the Kelvin sign to "k"), which Rainbow,
            # reading bytes, never does.
            if text.isascii():
                return find_lower(text.lower())
            return find_mixed(text)

        def prepare(doc):
            if skip_header:
                m = _HEADER_END.search(doc)
                doc = doc[m.end():] if m is not None else ""
            # libbow's lexer reads the document (after the header, which it
            # skips on the file) as a C string: it ends at the first NUL.
            doc = doc.partition("\x00")[0]
            if skip_html:
                doc = _without_html(doc)
            return doc

        def keep(run):
            if run[0] <= "9":  # a digit run: only found with tag_digits
                return _DIGIT_TAG.format(len(run))
            word = run.lower()
            if len(word) > hi or word in stop:
                return None
            return word

        return prepare, find, keep

    def tokenize(self, doc):
        """Return the tokens of one document, in order, as ``transform`` counts them.

        Parameters
        ----------
        doc : str
            One document.

        Returns
        -------
        tokens : list of str
            The kept words (and digit tags), before any vocabulary pruning.
        """
        if not isinstance(doc, str):
            raise TypeError(f"doc must be a str, got {type(doc).__name__}")
        prepare, find, keep = self._lexer()
        return [t for t in map(keep, find(prepare(doc))) if t is not None]

    # -- fitting -----------------------------------------------------------

    @parameter_errors()
    def _check_dtype(self):
        try:
            dtype = np.dtype(self.dtype)
        except TypeError:
            raise TypeError(f"dtype must be a numpy numeric dtype, got {self.dtype!r}") from None
        if dtype.kind not in "iuf" or dtype == np.float16:
            raise TypeError(f"dtype must be a numpy integer, float32 or float64 dtype (what "
                            f"SciPy's sparse matrices hold), got {dtype}")
        return dtype

    def _scan(self, docs, column_of):
        """Lex ``docs`` into a canonical CSR matrix of counts (int64).

        ``column_of(token)`` gives the column of a kept token, or -1 to ignore
        it. Each distinct run of characters is lexed and looked up once for
        the whole call (``cache``), so the Python work per document is one
        dictionary look-up per distinct run; the counting of repeated runs
        happens in C inside ``Counter``.
        """
        prepare, find, keep = self._lexer()
        cache = {}
        cache_get = cache.get
        indices, values, indptr = [], [], [0]
        for doc in docs:
            for run, n in Counter(find(prepare(doc))).items():
                j = cache_get(run)
                if j is None:
                    token = keep(run)
                    j = cache[run] = -1 if token is None else column_of(token)
                if j >= 0:
                    indices.append(j)
                    values.append(n)
            indptr.append(len(indices))
        n_columns = int(max(indices, default=-1)) + 1  # NumPy 1: uint64 + 1 is a float
        X = sp.csr_matrix(
            (np.array(values, dtype=np.int64), np.array(indices, dtype=np.int64),
             np.array(indptr, dtype=np.int64)),
            shape=(len(docs), n_columns))
        # Two runs can give one token ("The" and "the" in a non-ASCII text,
        # "12" and "34" under tag_digits): sum them into one entry.
        X.sum_duplicates()
        return X

    def _finish(self, data, indices, indptr, n_columns, dtype):
        # A count the dtype cannot hold exactly would wrap (integers) or round
        # (floats): refuse it rather than return different counts.
        largest = int(data.max()) if data.size else 0
        exact_up_to = (np.iinfo(dtype).max if dtype.kind in "iu"
                       else 2 ** (np.finfo(dtype).nmant + 1))
        if largest > exact_up_to:
            raise ValueError(
                f"dtype {dtype} cannot hold a count of {largest} exactly (it holds up to "
                f"{exact_up_to}); use a wider dtype")
        index_dtype = np.int32 if max(len(indices), n_columns) < 2**31 else np.int64
        X = sp.csr_matrix(
            (data.astype(dtype), indices.astype(index_dtype), indptr.astype(index_dtype)),
            shape=(len(indptr) - 1, n_columns))
        X.sort_indices()
        return X

    def _fit(self, raw_documents):
        docs = _check_docs(raw_documents)
        dtype = self._check_dtype()
        doc_count = _check_count_threshold(self.prune_by_doc_count, "prune_by_doc_count")
        occur_count = _check_count_threshold(self.prune_by_occur_count, "prune_by_occur_count")
        ids = {}
        X = self._scan(docs, lambda token: ids.setdefault(token, len(ids)))
        words = np.empty(len(ids), dtype=object)
        words[list(ids.values())] = list(ids)
        # After sum_duplicates a word appears at most once per row, so the
        # column counts of the pattern are document frequencies.
        df = np.bincount(X.indices, minlength=len(ids))
        total = np.bincount(X.indices, weights=X.data, minlength=len(ids)).astype(np.int64)
        mask = np.ones(len(ids), dtype=bool)
        if doc_count:
            mask &= df > doc_count
        if occur_count:
            mask &= total >= occur_count
        kept = np.flatnonzero(mask)
        if kept.size == 0 and not docs:
            raise ValueError("empty vocabulary: no training document was given (got an "
                             "empty sequence)")
        if kept.size == 0:
            raise ValueError(
                f"empty vocabulary: the {len(docs)} training documents hold no word left "
                f"after the stop list and pruning (prune_by_doc_count="
                f"{self.prune_by_doc_count}, prune_by_occur_count={self.prune_by_occur_count})")
        # Columns in sorted word order, as scikit-learn's vectorisers number them.
        kept = kept[np.argsort(words[kept], kind="stable")]
        remap = np.full(len(ids), -1, dtype=np.int64)
        remap[kept] = np.arange(kept.size)
        new_indices = remap[X.indices]
        keep_entry = new_indices >= 0
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[keep_entry]
        indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=X.shape[0]))))
        # Built (and its dtype check passed) before any attribute changes: a
        # refused refit replaced the previous fit with the refused data's.
        X = self._finish(X.data[keep_entry], new_indices[keep_entry], indptr, kept.size, dtype)
        self.vocabulary_ = _FittedVocabulary((w, j) for j, w in enumerate(words[kept].tolist()))
        # Numbered here, so transform need not check it until it is edited
        # (see _check_vocabulary).
        self._fitted_vocabulary = self.vocabulary_
        self.document_frequency_ = df[kept].astype(np.int64)
        self.occurrence_count_ = total[kept]
        self.n_documents_fit_ = len(docs)
        return X

    def __setstate__(self, state):
        # Pickled before the vocabulary noted its edits (a plain dict, which
        # transform would trust however edited): as fit makes it now.
        fitted = state.get("_fitted_vocabulary")
        if type(fitted) is dict and state.get("vocabulary_") is fitted:
            vocabulary = _FittedVocabulary(fitted)
            vocabulary.edited = True  # (maybe edited before it was pickled: checked once)
            state["vocabulary_"] = state["_fitted_vocabulary"] = vocabulary
        self.__dict__.update(state)

    def fit(self, raw_documents, y=None):
        """Learn the vocabulary from training documents.

        Parameters
        ----------
        raw_documents : iterable of str, length n_documents
            Training documents.
        y : ignored

        Returns
        -------
        self : RainbowVectorizer
        """
        self._fit(raw_documents)
        return self

    def fit_transform(self, raw_documents, y=None):
        """Learn the vocabulary and return the training count matrix.

        Parameters
        ----------
        raw_documents : iterable of str, length n_documents
            Training documents.
        y : ignored

        Returns
        -------
        X : scipy.sparse.csr_matrix of shape (n_documents, n_features)
            Word counts in ``dtype``, sorted int32 column indices, no explicit
            zeros.
        """
        return self._fit(raw_documents)

    def transform(self, raw_documents):
        """Count the vocabulary's words in documents.

        Parameters
        ----------
        raw_documents : iterable of str, length n_documents
            Documents; words outside ``vocabulary_`` are ignored.

        Returns
        -------
        X : scipy.sparse.csr_matrix of shape (n_documents, n_features)
            Word counts in ``dtype``, sorted int32 column indices, no explicit
            zeros.
        """
        self._check_fitted()
        vocabulary = self.vocabulary_
        if (vocabulary is not getattr(self, "_fitted_vocabulary", None)
                or getattr(vocabulary, "edited", False)):
            # Cleared before the check, so that an edit made meanwhile (in
            # another thread) raises it again: checked next time.
            fitted = isinstance(vocabulary, _FittedVocabulary)
            if fitted:
                vocabulary.edited = False
            try:
                _check_vocabulary(vocabulary)  # assigned, or edited in place, since the fit
            except BaseException:
                if fitted:
                    vocabulary.edited = True
                raise
        docs = _check_docs(raw_documents)
        dtype = self._check_dtype()
        vocab_get = vocabulary.get
        X = self._scan(docs, lambda token: vocab_get(token, -1))
        if X.nnz and X.indices.max() >= len(vocabulary):  # the fit's, edited in place
            _check_vocabulary(vocabulary)
        return self._finish(X.data, X.indices, X.indptr, len(vocabulary), dtype)

    def get_feature_names_out(self, input_features=None):
        """Return the vocabulary in column order.

        Parameters
        ----------
        input_features : None
            Unused: a vectorizer's columns are its vocabulary, whatever its
            input (as scikit-learn's ``CountVectorizer``).

        Returns
        -------
        names : ndarray of shape (n_features,), dtype object
            ``names[j]`` is the word counted in column j.
        """
        self._check_fitted()
        _check_vocabulary(self.vocabulary_)
        names = np.empty(len(self.vocabulary_), dtype=object)
        for w, j in self.vocabulary_.items():
            names[j] = w
        return names

    def _check_fitted(self):
        if not hasattr(self, "vocabulary_"):
            raise not_fitted_error(
                "This RainbowVectorizer instance is not fitted yet; call 'fit' with "
                "training documents first")


class _FittedVocabulary(dict):
    """``vocabulary_`` as fit numbers it: a dict that notes any change made
    to it in place through its methods (``edited``), so that transform
    checks it again (see _check_vocabulary) without checking all of it at
    every call. (Noted by the column numbers alone, a word added in place
    under a column another word has was merged into that word's counts,
    silently: a review.) ``dict``'s own methods called on it directly
    (``dict.__setitem__(vocabulary, ...)``) go unnoticed."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # (Called again on a vocabulary: an edit like the others.)
        self.edited = "edited" in self.__dict__


def _noting_edits(name):
    method = getattr(dict, name)

    def edit(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        finally:
            # After the change: a check that cleared the flag meanwhile
            # (see transform) must not take the change as checked.
            self.edited = True

    edit.__name__ = name
    return edit


for _name in ("__setitem__", "__delitem__", "__ior__", "clear", "pop", "popitem",
              "setdefault", "update"):
    setattr(_FittedVocabulary, _name, _noting_edits(_name))
del _name


def _check_vocabulary(vocabulary):
    """Refuse a ``vocabulary_`` (assigned by hand, or edited) that does not
    map words to the columns 0..n-1, each once: column numbers beyond n made
    a CSR matrix SciPy rejects (and whose ``toarray`` crashed the process),
    negative ones dropped their word, and repeated ones merged words."""
    if not isinstance(vocabulary, collections.abc.Mapping):
        raise TypeError(
            f"vocabulary_ must be a dict from words to column numbers, got "
            f"{type(vocabulary).__name__}")
    n = len(vocabulary)
    for word, column in vocabulary.items():
        if not isinstance(word, str):
            raise TypeError(
                f"vocabulary_ must map words (str) to column numbers, got the key {word!r} "
                f"of type {type(word).__name__}")
        if isinstance(column, (bool, np.bool_)) or not isinstance(column, (int, np.integer)):
            raise TypeError(
                f"vocabulary_ must map words to integer column numbers, got {column!r} "
                f"({type(column).__name__}) for {word!r}")
    # Integers now: out of range (int64's too) or repeated is the rest.
    columns = np.array([c if -1 <= c <= n else -1 for c in vocabulary.values()],
                       dtype=np.int64)
    inside = columns >= 0
    inside[inside] = columns[inside] < n
    counts = np.bincount(columns[inside], minlength=n)
    bad = ~inside
    bad[inside] = counts[columns[inside]] > 1
    if np.any(bad):
        k = int(np.flatnonzero(bad)[0])
        word, column = list(vocabulary.items())[k]
        raise ValueError(
            f"vocabulary_ must number its {n} words 0 to {n - 1}, each number once, got "
            f"{int(column)} for {word!r}"
            + (" (given to another word too)" if inside[k] else ""))
