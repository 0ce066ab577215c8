"""Which piece of writing a task names: one that is never a line or two (PIECE_RE), one written in sentences or
verse that a list of points is not (RUNNING_PIECE_RE), one in verse asked to be written (VERSE_PIECE_RE).
rules.substance judges answers by them; rules.instructions reads a song's refrain as no repeat."""

from __future__ import annotations

import re

# A piece of writing that is never a line or two; a haiku, a slogan or a title may be.
# "letter" the piece, not "in capital letters", "lower case letters", "all letters in your reply" or "the letter e"
PIECE_RE = re.compile(r"\b(?:essays?|articles?|blog\s+posts?|stor(?:y|ies)|"
                      r"(?<!capital )(?<!lowercase )(?<!uppercase )(?<!case )(?<!small )(?<!all )(?<!the )letters?(?!\s+[a-z]\b)|poems?|songs?|lyrics|reviews?|critiques?|"
                      r"(?<!-)speech(?:es)?(?!\s+(?:bubbles?|therap|recogni|synthes|apps?\b))|reports?|proposals?|pitch(?:es)?|decks?|e-?mails?|descriptions?|scripts?|"
                      r"raps?|newsletters?|memos?|biograph(?:y|ies)|rubrics?|blurbs?|ads?(?!\s+hoc)|advertisements?|expand(?:ing)?\s+on|"
                      r"elaborat(?:e|ing)\s+on)\b", re.I)
# What follows a piece's name when it names the piece itself, not something else ("a speech therapy app", "a
# song-writing course", "in a rap style"): the phrase ends.
_PIECE_END = (r"(?=\s*$|\s*[^\w\s-]|\s+(?:about|on|for|to|of|that|which|who|in|with|where|from|by|"
              r"and|or|as|at|titled|called|named|using|describing|explaining|when|set|written|"
              r"based|without|like|ending|starting|beginning|before|after|because|so)\b)")
# One piece written in sentences or verse, which a list of points is not (several poems or jokes may be a list);
# not a toast, a note or a message, whose names also name other things ("how to make toast", "release notes").
RUNNING_PIECE_RE = re.compile(r"\b(?:poem|haiku|limerick|sonnet|song|lyrics|rap|shanty|ballad|hymn|anthem|story|"
                              r"(?<!capital )(?<!lowercase )(?<!uppercase )(?<!case )(?<!small )(?<!all )(?<!the )letter(?!\s+[a-z]\b)|"
                              r"essay|speech|riddle|joke|dialogue|pep\s+talk|monologue|eulogy|obituary|fable|tale|"
                              r"anecdote|paragraph)\b(?!s)" + _PIECE_END, re.I)
# One piece in verse asked to be written ("write me a funny poem", "compose the lyrics", "summarize it into a poem",
# "in the form of a poem"), which one paragraph of prose is not; not a poem asked about ("summarize the poem", "what
# is a haiku?") nor one a text only names ("a blog post about the history of rap").
VERSE_PIECE_RE = re.compile(
    r"\b(?:write|compose|pen|craft|draft|create|make|generate|produce|give\s+me|come\s+up\s+with|into|wants?|"
    r"needs?|(?:would|'d)\s+like|"
    r"in\s+the\s+form\s+of|as)\s+(?:me\s+|us\s+)?(?:a|an|the|one|some|my|our|your)?\s*"
    # up to four words that describe it ("a funny 30-line"), none that starts another phrase ("than a sonnet")
    r"(?:(?!(?:than|about|of|for|on|to|that|which|with|from|by|and|or|in|at)\b)[\w'-]+\s+){0,4}?"
    r"(?P<piece>poem|haiku|limerick|sonnet|song|lyrics|rap|verse|shanty|ballad|hymn|anthem|chant|jingle)\b(?!s)"
    + _PIECE_END, re.I)
