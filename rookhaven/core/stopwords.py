"""Named stop-word lists; the name is part of every config digest, so a list never changes in place.

To change a list, add a new name (``english-v2``) and leave the old one as it was, so old
audits still replay.
"""

from __future__ import annotations

from ..errors import ConfigError

# Function words of English (close to the NLTK and Lucene lists) plus the query connectors,
# which carry no topic of their own.
_ENGLISH_V1 = """
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each either else
few for from further had has have having he her here hers herself him himself his how i if
in into is it its itself just me more most my myself neither no nor not of off on once only
or other ought our ours ourselves out over own plus same shall she should so some such than
that the their theirs them themselves then there these they this those through to too under
until up upon us very via was we were what when where whether which while who whom whose why
will with within without would yet you your yours yourself yourselves
"""

STOPWORD_LISTS: dict[str, frozenset[str]] = {
    "none": frozenset(),
    "english-v1": frozenset(_ENGLISH_V1.split()),
}


def stopword_list(name: str) -> frozenset[str]:
    """The stop words registered under ``name``."""
    try:
        return STOPWORD_LISTS[name]
    except KeyError:
        known = ", ".join(sorted(STOPWORD_LISTS))
        raise ConfigError(f"unknown stop-word list {name!r}; choose one of: {known}") from None
