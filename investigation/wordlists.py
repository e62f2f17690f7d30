"""The word lists of the text utilities (`investigation.text`): stopwords, the words that open a question,
the connectors inside a name, month names and the abbreviations a sentence does not end at."""

from __future__ import annotations

STOPWORDS: frozenset[str] = frozenset(
    [
        "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are",
        "aren", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
        "by", "can", "could", "did", "didn", "do", "does", "doesn", "doing", "don", "down", "during", "each",
        "either", "ever", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her",
        "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "isn", "it",
        "its", "itself", "just", "let", "me", "more", "most", "much", "must", "my", "myself", "neither", "no",
        "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours",
        "ourselves", "out", "over", "own", "same", "shall", "she", "should", "so", "some", "such", "than",
        "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this",
        "those", "through", "to", "too", "under", "until", "up", "upon", "very", "was", "wasn", "we", "were",
        "weren", "what", "whatever", "when", "where", "whether", "which", "while", "who", "whom", "whose",
        "why", "will", "with", "within", "would", "you", "your", "yours", "yourself", "yourselves", "s", "t",
        "d", "ll", "m", "re", "ve", "y", "o", "one", "ones", "thing", "things", "something", "anything",
        "else", "many", "known", "called", "named", "name", "kind", "type", "part",
    ]
)

# Words that start a question and are capitalised only because they start it.
QUESTION_WORDS: frozenset[str] = frozenset(
    [
        "who", "whom", "whose", "what", "which", "when", "where", "why", "how", "is", "are", "was", "were",
        "do", "does", "did", "can", "could", "will", "would", "name", "list", "tell", "give", "in", "on",
        "at", "of", "from", "the", "a", "an", "both", "between", "besides", "this", "these", "during",
        "since", "if", "for", "to", "by", "as", "after", "before",
    ]
)

# Lower-case words that may sit inside a capitalised name ("Bank of America", "Ludwig van Beethoven").
NAME_CONNECTORS: frozenset[str] = frozenset(
    [
        "of", "the", "de", "del", "della", "der", "di", "du", "da", "van", "von", "la", "le", "den", "y", "&",
        "to", "from", "for", "a", "an", "with", "by", "upon",
    ]
)

# The twelve full names first (dates are matched on them), then the abbreviations.
MONTHS = [
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
    "dec",
]

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

# Words after which a full stop does not end a sentence ("Dr. Smith", "U.S. Army").
ABBREVIATIONS: frozenset[str] = frozenset(
    [
        "mr", "mrs", "ms", "dr", "st", "jr", "sr", "vs", "no", "inc", "ltd", "co", "mt", "ft", "u.s", "e.g",
        "i.e",
    ]
)
