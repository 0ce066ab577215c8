"""Instructions about an answer's form, read from the task's words: the case of every letter, no commas, quotes
around the whole answer, the exact ending, JSON; and parts the answer must mark: a <<title>>, *highlighted*
passages, [placeholders], a postscript, paragraphs split by ***, numbered section markers, two answers split by
******, sentence counts, how often a word or a letter appears, words and letters to leave out, the request
repeated first.

rules.form_check checks an answer against them and fixes by program what loses nothing; the model's own reading
(rules.checklist) fills what these patterns miss.

``read_form`` is a cheap first reader: English patterns for each requirement as people commonly put it ("keep
every letter lowercase", "no capital letters", "add a P.S. at the end", "separate the paragraphs with ***"),
written to miss rather than misread: a case word about part of the answer ("the title in capitals"), a marker the
task does not show, or a count it does not give, is not read. What the patterns do not recognise is not checked
by this module.
"""

from __future__ import annotations

import re
from typing import Any

from hierplan.rules.numbers import NUMBER_WORDS_PATTERN, RANGE_TO as _TO, word_number
from hierplan.rules.text import CAPS_PHRASE, LENGTH_BEFORE_RE, MAX_CAPS_WORDS

# A count: digits, a number in words (rules.numbers), or "a"/"an"/"single" for one.
_N = r"(\d{1,4}|" + NUMBER_WORDS_PATTERN + r"|an?|single)"
# A count given as a number ("a 2 paragraph essay" counts 2, not "a").
_COUNT = r"(\d{1,4}|" + NUMBER_WORDS_PATTERN + r")"
_ONE = {"a": 1, "an": 1, "single": 1, "once": 1, "twice": 2, "thrice": 3}
# Quoted text: "...", “...”, ‘...’ or '...' (an apostrophe inside a word, as in 'don't', does not close it).
QUOTED = (r"(?:\"([^\"\n]+)\"|\u201c([^\u201d\n]+)\u201d|\u2018([^\u2019\n]+)\u2019|"
           r"'((?:[^'\n]|(?<=\w)'(?=\w))+)'(?!\w))")
# The end of a clause: a sentence's stop, a semicolon or colon, a line break.
_CLAUSE_END = r"[.!?;:\n](?=\s|$)|\n"
# Words that negate what follows them within a few words.
_NEGATION = (r"\b(?:no|not|never|without|avoid(?:ing)?|nor|zero|cannot|don'?t|doesn'?t|shouldn'?t|mustn'?t|"
             r"won'?t|can'?t|refrain\s+from)\b")
# A number in words or digits, anywhere ("more than two", "3 times"): a limit, not a ban.
_ANY_NUMBER_RE = re.compile(r"\b(?:\d+|" + NUMBER_WORDS_PATTERN + r"|once|twice|thrice)\b", re.I)

# --- Case ------------------------------------------------------------------------------------------------------
_CAPS = r"(?:capital\s+letters?|capitals|capitali[sz]ation|upper[\s-]?case(?:\s+letters?)?|all[\s-]caps|caps|" \
        r"block\s+(?:capitals|letters))"
_LOWER = r"(?:lower[\s-]?case(?:d)?(?:\s+letters?)?|small\s+letters)"
_CASE_RE = re.compile(rf"\b(?:(?P<caps>{_CAPS})|(?P<lower>{_LOWER}))\b", re.I)
_EVERY = r"(?:all|only|entirely|completely|fully|solely|exclusively|purely|strictly|just|everything|" \
         r"every\s+(?:single\s+)?(?:letter|word|character)s?|all\s+(?:the\s+|of\s+the\s+)?(?:letters|words|text))"
# What stands before a case word when it is about the whole answer: "in lowercase", "all lowercase", "every letter
# lowercase", "keep it lowercase", "should be in capitals".
_WHOLE_BEFORE_RE = re.compile(
    rf"(?:\b(?:in|into)\s+(?:all\s+)?|\b{_EVERY}\s+(?:[\w']+\s+){{0,2}}?(?:in\s+)?|"
    r"\b(?:be|is|are|stay|stays|remain|remains|written|typed|keep\s+(?:it|them|everything|all))\s+"
    r"(?:only\s+|all\s+)?)$", re.I)
# "use lowercase", "using capital letters": about the whole answer only when nothing limits it after ("use capital
# letters in headings", "when to use capital letters in English").
_USE_BEFORE_RE = re.compile(r"\b(?:use|using)\s+(?:only\s+|all\s+)?$", re.I)
# A question about case ("Why do some languages have no capital letters?") asks for no case.
_QUESTION_RE = re.compile(r"^\s*(?:why|how|what|when|where|which|who|whose|do|does|did|is|are|was|were|has|have|had)\b"
                          r"[^.!?\n]*\?", re.I)
_UNIVERSAL_BEFORE_RE = re.compile(rf"\b(?:{_EVERY}|in\s+all)\s+(?:[\w']+\s+){{0,2}}?(?:in\s+)?$", re.I)
# A case word about part of the answer: "the title in capitals", "names in lowercase", "words in all caps".
_PART_BEFORE_RE = re.compile(
    r"\b(?<!every\s)(?<!each\s)(?<!all\s)(?<!your\s)(?:titles?|headings?|headlines?|headers?|names?|keywords?|"
    r"key\s+words?|acronyms?|initials?|labels?|subject\s+lines?|first\s+(?:letters?|words?|lines?)|words?|terms?|"
    r"phrases?|abbreviations?|nouns?|verbs?|adjectives?)\b(?:\s+[\w'\"\u201c\u201d]+){0,3}?\s+"
    r"(?:(?:in|with|using|as|written\s+in)\s+)?(?:all\s+)?$", re.I)
# What may follow a case word about the whole answer ("lowercase letters only", "in capitals, please"); anything
# else is a noun it describes ("in lowercase handwriting") or a part it is limited to ("capitals for names").
_WHOLE_AFTER = (r"(?:letters?|characters?|text|english|only|throughout|everywhere|anywhere|please|too|"
                r"so|then|as\s+well|at\s+all|whatsoever|allowed|permitted|are|is|should|must|will|may|can|shall|used|"
                r"appear\w*|occur\w*|show\w*|be|anymore|"
                r"of\s+any|for\s+(?:the\s+|your\s+)?(?:whole|entire|all|every|everything|complete|full)|"
                r"in\s+(?:your|the|my|this|it|any|all|every)|from\s+(?:start|beginning|top))")
_WHOLE_AFTER_RE = re.compile(rf"\s*(?:{_WHOLE_AFTER}|and|or|but|with|without|no)\b|\s*$|\s*[^\w\s'-]", re.I)
_BARE_CAPITALS_AFTER_RE = re.compile(rf"\s*{_WHOLE_AFTER}\b|\s*$|\s*[^\w\s'-]", re.I)
_NEGATED_BEFORE_RE = re.compile(_NEGATION + r"(?:\s+[\w']+){0,4}?\s+$", re.I)
_NO_CAPITALIZING_RE = re.compile(
    r"\b(?:don'?t|do\s+not|never|without|no\s+need\s+to)\s+capitali[sz](?:e|ing)\s+(?:anything|any(?:thing)?\b|"
    r"a\s+single|(?:any\s+)?(?:of\s+the\s+)?(?:words?|letters?)\b|at\s+all|(?=[.!?;,]|$))"
    r"|\b(?:nothing|no\s+(?:words?|letters?|characters?)|not\s+(?:a\s+single|one|any)\s+(?:word|letter|character)s?)"
    r"\b[^.!?;\n]{0,50}?\bcapitali[sz]ed\b", re.I)
_CAPITALIZE_ALL_RE = re.compile(r"\bcapitali[sz]e\s+(?:every|each|all)\s+(?:single\s+)?(?:of\s+the\s+)?letters?\b"
                                r"|\bcapitali[sz]e\s+everything\b", re.I)

# --- Commas, quotes, the ending, JSON, a title -------------------------------------------------------------------
_NO_COMMAS_RE = re.compile(
    r"\b(?:no|not|never|without|zero|avoid\w*|refrain\w*|don'?t|omit\w*|skip|drop|remove|leave\s+out|free\s+of|ban\w*|"
    r"forbid\w*)"
    r"\b(?P<gap>(?:\s+[\w']+){0,5}?)\s+commas?\b(?!\s+(?:after|before|between|in\s+(?:numbers|dates|lists)))"
    r"|\bcommas?\s+(?:are|is)\s+(?:not\s+(?:allowed|permitted|welcome|ok|okay|to\s+be\s+used|wanted)|forbidden|"
    r"banned|off[\s-]limits|prohibited|out)\b|\bcomma[\s-]free\b", re.I)
# "never omit commas", "no more than two commas", "don't forget the commas": not a ban on commas.
_NOT_A_BAN_RE = re.compile(r"\b(?:forget|miss|skip|omit|drop|leave|remove|more|than|fewer|less|too|many|much|only|"
                           r"except|overuse|worry|need|bother|care|matter|enough|extra|unnecessary|unneeded)\b", re.I)
_WHOLE_ANSWER = (r"(?:(?:your|the|this|my)\s+(?:(?:entire|whole|full|complete)\s+)?(?:answer|response|reply|output|"
                 r"text|message)|(?:your|the)\s+(?:entire|whole|full|complete)\s+\w+|everything(?:\s+you\s+write)?|"
                 r"it(?:\s+all)?|all\s+of\s+it|the\s+whole\s+thing)")
_QUOTE_MARKS = (r"(?:a\s+pair\s+of\s+|an?\s+)?(?:double\s+)?(?:quotation\s+marks?|quotes|quote\s+marks?|"
                r"quotations\s+marks)")
_QUOTED_RE = re.compile(
    rf"\b(?:wrap|enclose|surround|put|place|frame)\w*\s+{_WHOLE_ANSWER}\s+(?:\([^()\n]{{0,80}}\)\s+)?"
    rf"(?:[\w']+\s+){{0,3}}?(?:in|with|within|inside|between|by|into)\s+{_QUOTE_MARKS}\b"
    rf"|\b{_QUOTE_MARKS}\s+(?:around|round)\s+{_WHOLE_ANSWER}\b"
    # "start and end the whole thing with a double quote mark"
    rf"|\b(?:start|begin|open)\s+and\s+(?:end|finish|close)\s+{_WHOLE_ANSWER}\s+with\s+{_QUOTE_MARKS}"
    # "the very first character of your reply and the very last one need to be a double quote mark", "with a
    # double quote mark as the very first and very last character": one sentence names both ends and the mark
    rf"|\b(?:very\s+)?first\s+(?:and\s+(?:the\s+)?(?:very\s+)?last\s+)?characters?\b(?=[^.\n]{{0,80}}?\blast\b)"
    rf"[^.\n]{{0,80}}?\b(?:double\s+)?(?:quotation|quote)\s+marks?\b"
    rf"|\b(?:double\s+)?(?:quotation|quote)\s+marks?\s+as\s+the\s+(?:very\s+)?first\s+and\s+(?:the\s+)?(?:very\s+)?"
    rf"last\s+characters?\b"
    rf"|\b{_WHOLE_ANSWER}\s+(?:should|must|has\s+to|needs\s+to|will|is|are)\s+(?:be\s+)?"
    rf"(?:(?:wrapped|enclosed|put|placed)\s+)?(?:in|inside|within|between)\s+{_QUOTE_MARKS}\b", re.I)
# "The answer should be short and be wrapped in double quotes": the sentence's subject is the whole answer.
_QUOTED_PASSIVE_RE = re.compile(rf"\b(?:be|is|are)\s+(?:wrapped|enclosed|surrounded|put|placed)\s+(?:in|with|within|"
                                rf"inside|by|between)\s+{_QUOTE_MARKS}\b", re.I)
_ANSWER_SUBJECT_RE = re.compile(r"^\s*(?:\w+\s+){0,4}?(?:(?:your|the)\s+(?:(?:entire|whole|full|complete)\s+)?"
                                r"(?:answer|response|reply|output)|it|everything)\b", re.I)
_SINGLE_QUOTES_RE = re.compile(r"\bsingle\s+quot", re.I)
_END_VERB = r"\b(?:end|finish|conclude|close|wrap\s+up|sign\s+off)\w*\s+(?!(?:each|every|all)\b)" \
            r"(?:(?:your|the|it|this|that)\b\s*(?:[\w']+\s+){0,2})?"
_END_RE = re.compile(
    _END_VERB + r"(?:with|on|by\s+(?:saying|writing))\s+(?:the\s+|this\s+|a\s+|these\s+)?"
    r"(?:(?:exact|following|same|precise|very)\s+)*(?:phrase|sentence|words?|line|question|quote|text)?\s*"
    r"(?:of\s+)?:?\s*" + QUOTED
    + r"|\b(?:the\s+)?(?:very\s+)?(?:last|final|closing)\s+(?:words?|sentence|line|phrase)\s+"
    r"(?:of\s+(?:your|the)\s+\w+\s+)?(?:should|must|has\s+to|needs\s+to|will)\s+(?:be|read|say)\s*:?\s*" + QUOTED
    + r"|\b(?:the\s+)?(?:very\s+)?end\s+of\s+(?:your|the)\s+\w+\s+(?:should|must|has\s+to|needs\s+to)\s+(?:be|read|say)"
    r"\s*:?\s*" + QUOTED
    + "|" + _END_VERB + r"with\s*(?:(?:exactly|precisely|this|these\s+words|the\s+(?:words|line|sentence))\s*)?"
    r":\s*([^\n]+?[.!?]|[^\n.!?]+?)\s*(?:$|\n)", re.I)  # to the line's end: "end with exactly: Let me know"
_JSON_RE = re.compile(
    r"\b(?:answer|respond|reply|output|return|format|give|write|provide|present|put|wrap|structure|send|deliver)\w*"
    r"\s+(?P<gap>(?:[\w',]+\s+){0,6}?)(?:in|as|into|with|using)\s+(?:(?:a|an|one|valid|pure|proper|strict|"
    r"well-formed|only)\s+)*json\b"
    r"|\b(?:entire|whole|full|complete)\s+(?:output|answer|response|reply)\b[^.!?\n]{0,40}?\bjson\b"
    r"|(?<!how\sto\s)\b(?:use|using)\s+(?:(?:a|valid|proper|strict)\s+)?json\s+(?:format|formatting|syntax)\b"
    r"(?!\s+(?:for|to|in)\b)"
    r"|\bjson\s+only\b|\bonly\s+(?:valid\s+)?json\b|\bnothing\s+(?:but|except|other\s+than)\s+(?:valid\s+)?json\b"
    r"|\b(?:your|the)\s+(?:answer|response|reply|output)\s+(?:should|must|has\s+to|needs\s+to|will)\s+be\s+"
    r"(?:(?:a|an|one|valid|pure|well-formed)\s+)*json\b", re.I)
# "Write a function that parses JSON", "explain how to load JSON": JSON is the subject, not the answer's format.
_JSON_SUBJECT_RE = re.compile(r"\b(?:function|code|script|program|class|parser|pars\w*|read\w*|load\w*|that|which|"
                              r"how|file|files|data\s+from|convert\w*\s+(?:it|them|this|these)\s+from)\b", re.I)
_TITLE_RE = re.compile(r"<<[^<>\n]{0,60}>>|\bdouble\s+angled?\s+brackets\b|\bdouble\s+chevrons\b", re.I)

# --- Marked parts: highlights, placeholders, a postscript ---------------------------------------------------------
_TEXT_UNITS = r"(?:sections?|parts?|phrases?|words?|passages?|terms?|sentences?|lines?|spans?|bits?|snippets?|" \
              r"excerpts?|pieces?|places?|spots?|fragments?|expressions?|names?)"
_UNIT_OR_NOUN = r"(?:(?:[\w'-]+\s+){0,2}?" + _TEXT_UNITS + r"|(?:[\w'-]+\s+){0,2}?[\w'-]+)"
_MARKED = r"(?:in\s+italics?|italici[sz]ed|highlighted|emphasi[sz]ed|in\s+bold|bold(?:ed|faced)?|" \
          r"with\s+(?:markdown\s+)?(?:emphasis|italics|bold)|" \
          r"with\s+(?:single\s+)?asterisks|(?:wrapped|enclosed|marked)\s+(?:in|with)\s+(?:single\s+)?asterisks)"
_HIGHLIGHT_RES = (
    # "highlight at least 3 key phrases", "italicize two passages", "bold 4 terms"
    re.compile(r"\b(?:highlight|italici[sz]e|emphasi[sz]e|embolden|bold(?:face)?)\w*\s+(?:at\s+least\s+|exactly\s+|"
               r"a\s+minimum\s+of\s+|no\s+fewer\s+than\s+)?" + _N + r"\s+(?P<what>" + _UNIT_OR_NOUN + r")\b", re.I),
    # "mark two passages in italics", "put 3 phrases in bold", "at least six sections should be highlighted"
    re.compile(r"\b(?:at\s+least\s+|exactly\s+|a\s+minimum\s+of\s+|no\s+fewer\s+than\s+)?" + _N + r"\s+"
               r"(?P<what>(?:[\w'-]+\s+){0,2}?[\w'-]+)\s+"
               r"(?:(?:should|must|need\s+to|will|to)\s+be\s+|that\s+(?:are|is)\s+)?" + _MARKED + r"\b", re.I),
    # "give at least 3 parts of the answer markdown emphasis", "add italics to two phrases"
    re.compile(r"\b(?:give|add|apply)\s+(?:at\s+least\s+|exactly\s+|a\s+minimum\s+of\s+)?" + _N + r"\s+"
               r"(?P<what>(?:[\w'-]+\s+){0,4}?)(?:markdown\s+)?(?:emphasis|italics|bold(?:ing)?|highlighting)\b",
               re.I),
    re.compile(r"\b(?:add|apply)\s+(?:markdown\s+)?(?:emphasis|italics|bold(?:ing)?|highlighting)\s+to\s+(?:at\s+"
               r"least\s+|exactly\s+)?" + _N + r"\s+(?P<what>" + _UNIT_OR_NOUN + r")\b", re.I),
    # "mark at least 3 lines ... by putting asterisks around them": marked with asterisks, not a list's bullets
    re.compile(r"\b(?:mark|flag|wrap|surround|set\s+off)\w*\s+(?:at\s+least\s+|exactly\s+|a\s+minimum\s+of\s+)?"
               + _N + r"\s+(?P<what>(?!bullet|points?\b|items?\b|list)[\w'-]+)\b"
               r"(?:(?!\b(?:bullet|list)|[.!?\n])[^*]){0,70}?\basterisks?\s+(?:around|on\s+(?:either|each|both)\s+side)",
               re.I),
    # "3 highlighted passages", "two italic phrases", "2 bolded terms"
    re.compile(r"\b" + _N + r"\s+(?:[\w'-]+\s+)?(?:italic|italici[sz]ed|highlighted|bold(?:ed)?|emphasi[sz]ed)\s+"
               r"(?:text\s+)?(?P<what>" + _TEXT_UNITS + r")\b", re.I),
)
# Markup named near a highlight: what makes "highlight three reasons" a request for marked text.
_MARKUP_RE = re.compile(r"\*|asterisk|italic|bold|markdown|emphasis", re.I)
_HIGHLIGHT_SOME_RE = re.compile(r"\b(?:highlight|italici[sz]e|emphasi[sz]e|bold)\w*\s+(?:some|a\s+few|several|"
                                r"key|important|the\s+(?:key|main|most\s+important))\b", re.I)
# "Highlight each section title with asterisks" with "in 4 sections" elsewhere: as many highlights as sections.
_HIGHLIGHT_EACH_RE = re.compile(r"\b(?:highlight|italici[sz]e|emphasi[sz]e|bold)\w*\s+(?:each|every|all)\s+"
                                r"(?:of\s+the\s+)?(?:[\w'-]+\s+){0,2}?(?P<unit>sections?|parts?|paragraphs?|days?)",
                                re.I)
# "put each question between single asterisks ..., and do at least 4 questions": the count is the units'
_MARK_EACH_RE = re.compile(r"\b(?:put|wrap|place|set|mark|write)\s+(?:each|every|all)\s+(?:of\s+the\s+)?"
                           r"(?:[\w'-]+\s+){0,2}?(?P<unit>[a-z]+?)s?\s+(?:between|in|inside|within|with)\s+"
                           r"(?:single\s+|double\s+)?(?:asterisks|italics|bold)\b", re.I)
_PLACEHOLDER_RES = (
    re.compile(r"\b(?:at\s+least\s+|a\s+minimum\s+of\s+|no\s+fewer\s+than\s+)?" + _N
               + r"\s+(?:[\w'-]+\s+){0,2}?placeholders?\b", re.I),
    re.compile(r"\b(?:at\s+least\s+|a\s+minimum\s+of\s+)?" + _N + r"\s+(?:[\w'-]+\s+){0,3}?(?:in|inside|within|"
               r"with|using|between)\s+square\s+brackets\b", re.I),
)
_PLACEHOLDERS_ANY_RE = re.compile(r"\b(?:use|include|add|leave|put|with|contain\w*|has|have)\s+(?:some\s+)?"
                                  r"placeholders?\b", re.I)
# "leave square bracket blanks like [price] wherever those go, at least 2 of them": blanks in brackets to leave,
# counted later in the sentence
_BRACKET_BLANKS_RE = re.compile(r"\b(?:use|include|add|leave|put)\s+(?:some\s+)?(?:square[\s-]+)?brackets?\s+"
                                r"(?:blanks?|slots?|fields?|gaps?)\b[^.!?\n]*", re.I)
_OF_THEM_RE = re.compile(r"\b(?:at\s+least\s+|a\s+minimum\s+of\s+)?" + _N + r"\s+of\s+them\b", re.I)
# A postscript marker as the task shows it: capital P and S, dotted or not, the P repeated for a second one.
_MARKER_RE = re.compile(r"(?<![\w.])P\.?\s?(?:P\.?\s?)*S\b\.?")
_POSTSCRIPT_RE = re.compile(r"\bpost[\s-]?script\b|(?<![\w.])P\.?\s?(?:P\.?\s?)*S\b")
_POSTSCRIPT_ASKED_RE = re.compile(
    r"\b(?:add|include|append|attach|end|finish|close|conclude|sign\s+off|put|write|tack|followed|with|want|like|"
    r"need|should|must|there\s+(?:should|must)\s+be)\b", re.I)

# --- Paragraphs and sections split or marked as the task shows --------------------------------------------------
_PARAGRAPHS_RE = re.compile(r"\b(?:exactly\s+|precisely\s+)?" + _COUNT + r"[\s-]+(?:[\w'-]+\s+)?"
                            r"(?:paragraphs?|sections?|parts?|blocks?|chunks?|stanzas?)\b(?!\s*(?:to|-|or)\s*\d)", re.I)
# Three asterisks as the task shows them (not six: those split two answers).
_DIVIDER_RE = re.compile(r"(?<!\*)\*\*\*(?!\*)")
# "Label each section Section 1, Section 2, ...", "start each part with PART X": a capitalised marker word and
# a number or placeholder the task shows.
_SECTION_MARKER_RE = re.compile(
    r"\b(?i:mark|label|begin|start|head|title|number|call|name|open|prefix|introduce|denote|tag|note|precede)\w*\b"
    r"[^.!?\n]{0,60}?['\"\u201c\u2018]?\b([A-Z][A-Za-z]+)\s+(?:X|N|#|\d{1,3}|\{[^}\n]{0,10}\}|<[^>\n]{0,10}>|"
    r"\[[^\]\n]{0,10}\])(?=\W|$)")
_SECTION_UNIT_RE = re.compile(r"\b(?:each|every)\s+(?:of\s+the\s+)?(?:[\w'-]+\s+)?([a-z]+?)s?\b", re.I)
# The literal separator of two answers, as the task shows it.
_TWO_SEPARATOR_RE = re.compile(r"(?<!\*)\*{6}(?!\*)")
_TWO_RE = re.compile(r"\b(?:two|2|both|pair)\b|\bseparat|\bdivid|\bsplit|\bbetween\b", re.I)

# --- Counts: sentences, words, letters -------------------------------------------------------------------------
_RELATION = (r"(at\s+least|no\s+fewer\s+than|no\s+less\s+than|a\s+minimum\s+of|minimum\s+of|more\s+than|over|"
             r"less\s+than|fewer\s+than|under|at\s+most|no\s+more\s+than|up\s+to|a\s+maximum\s+of|maximum\s+of|"
             r"exactly|precisely)")
# "a one-sentence summary": the answer's length, unless it names a part of each item
_N_SENTENCE_RE = re.compile(r"\b()" + _N + r"-sentence\b", re.I)
_SENTENCES_RES = (
    (re.compile(r"\b" + _RELATION + r"\s+(?:a\s+total\s+of\s+)?" + _N + r"\s+sentences?\b", re.I), None),
    (re.compile(r"\b()" + _N + r"\s+sentences?\s+(?:or\s+(?:fewer|less)|at\s+most|max(?:imum)?)\b", re.I), "at most"),
    (re.compile(r"\b()" + _N + r"\s+(?:or\s+more\s+sentences|sentences?\s+or\s+more)\b", re.I), "at least"),
    (re.compile(r"\b(?:in|of|with|using|use|write|keep\s+it\s+to|limit\s+(?:it|yourself)\s+to)\s+()" + _N
                + r"\s+sentences?\b(?!\s+or\b)", re.I), "exactly"),
    (_N_SENTENCE_RE, "exactly"),
)
_SENTENCE_RANGE_RE = re.compile(r"\bbetween\s+" + _N + r"\s+and\s+" + _N + r"\s+sentences\b|\b" + _N
                                + _TO + _N + r"\s+sentences\b", re.I)
# "3 sentences per paragraph", "each paragraph with at most 4 sentences": a count per part, not in all.
_PER_PART_BEFORE_RE = re.compile(r"\b(?:each|every|per)\b[^.!?;\n]{0,30}$", re.I)
_PER_PART_AFTER_RE = re.compile(r"^\s*(?:each|apiece|per\b|(?:in|on|for|about|of)\s+(?:each|every))", re.I)
_TIMES = r"(?:" + _N + r"(?:\s+or\s+more)?\s+times?|(once|twice|thrice))"
# Between the word and its count: "should appear", "must be used", "to show up", "in your answer".
_TIMES_GAP = (r"(?:(?:should|must|has\s+to|needs?\s+to|to|will|shall|is\s+to|can|may)(?:\s+not|n't)?\s+)?"
              r"(?:(?:appears?|be\s+used|occurs?|show\s+up|shows\s+up|come\s+up|comes\s+up|"
              r"be\s+(?:said|mentioned|repeated|included)|feature)"
              r"\s+)?(?:(?:in\s+(?:your|the)\s+\w+|in\s+it|in\s+there|throughout)\s+)?(?:for\s+)?"
              r"(?:a\s+total\s+of\s+)?")
_WORD = r"([A-Za-z][\w'-]*)"
_WORD_TIMES_RES = (
    re.compile(r"\b(?:word|keyword|term|name)\s+(?:" + QUOTED + "|" + _WORD + r")\s+" + _TIMES_GAP + _RELATION
               + r"?\s*" + _TIMES, re.I),
    re.compile(r"\b(?:use|include|mention|say|repeat|write)\w*\s+(?:the\s+(?:word|keyword|term|phrase|name)\s+)?"
               + QUOTED + r"\s+" + _TIMES_GAP + _RELATION + r"?\s*" + _TIMES, re.I),
)
# A bound said after its count: "use the word 'plan' two times at most", "three times or more"
_RELATION_AFTER_RE = re.compile(r"\s*(?:(?P<most>at\s+(?:the\s+)?most|max(?:imum)?|or\s+(?:fewer|less))|at\s+least|"
                                r"minimum|or\s+more)\b", re.I)
_LETTER_TIMES_RE = re.compile(r"\bletter\s+[\"'\u201c\u2018]?([a-z])\b[\"'\u201d\u2019]?\s+" + _TIMES_GAP + _RELATION
                              + r"?\s*" + _TIMES, re.I)
# Words in capital letters counted: "no more than 3 words in all caps", "two all-caps words at most", "use all caps
# for at least 4 words". A count before "words in all caps" after "of" ("a story of at most 200 words in all caps")
# is the piece's length, with a case for all of it (rules.text.LENGTH_BEFORE_RE).
_CAPS_WORDS = r"(?:all[\s-]?caps|upper[\s-]?case|capital[\s-]letter|block[\s-]capital)"
_CAPS_IN = r"(?:be\s+|are\s+)?(?:written\s+|typed\s+)?in\s+(?:all\s+|full\s+)?" + CAPS_PHRASE + r"\b"
# "words in caps may show up at most 5 times", "limit the number of all-caps words to 4"
_CAPS_NOUN = r"(?:words?\s+(?:in|written\s+in)\s+(?:all\s+|full\s+)?" + CAPS_PHRASE + r"|all[\s-]?caps\s+words?)"
_CAPS_WORDS_RES = (
    re.compile(r"\b" + _RELATION + r"\s+" + _N + r"\s+(?:words?\s+" + _CAPS_IN + r"|" + _CAPS_WORDS
               + r"\s+words?\b)", re.I),
    re.compile(r"\b()" + _N + r"\s+(?:words?\s+" + _CAPS_IN + r"|" + _CAPS_WORDS + r"\s+words?\b)", re.I),
    re.compile(r"\b(?:all[\s-]?)?" + CAPS_PHRASE + r"\s+(?:for|on)\s+" + _RELATION + r"?\s*" + _N + r"\s+words?\b",
               re.I),
    re.compile(r"\b" + _CAPS_NOUN + r"\b[^.!?\n]{0,40}?\b(?:appear|occur|show\s+up|be\s+used|are\s+used)\w*\s+"
               + _RELATION + r"?\s*" + _N + r"\s+times\b", re.I),
    # "go easy on all-caps words: fewer than 3 of them"
    re.compile(r"\b" + _CAPS_NOUN + r"\s*[:,(-]\s*" + _RELATION + r"\s+" + _N + r"\b", re.I),
    re.compile(r"\blimit\s+the\s+number\s+of\s+" + _CAPS_NOUN + r"\s+to\s+" + _RELATION + r"?\s*" + _N + r"\b", re.I),
)
_STOPWORDS = frozenset("should must to will would can appear appears occur in that the a an be is are of and or "
                       "you your it this which".split())

# --- Words and letters to leave out -------------------------------------------------------------------------------
_LEAVE_OUT = (r"(?:avoid(?:ing)?(?:\s+(?:using|saying|writing|mentioning|including))?|"
              r"(?:do|does|should|must|shall|can|will|may)\s*(?:not|n't)\s+(?:use|include|say|write|mention|contain|"
              r"have)|(?:don|can|won)['\u2019]?t\s+(?:use|include|say|write|mention)|never\s+(?:use|say|"
              r"write|include|mention)|without(?:\s+(?:using|saying|writing|including|mentioning))?|exclude|"
              r"leave\s+out|steer\s+clear\s+of|stay\s+away\s+from|refrain\s+from\s+(?:using|saying|writing))")
_QUOTED_LIST = r"(?:" + QUOTED + r"(?:\s*,\s*(?:and\s+|or\s+|nor\s+)?|\s+(?:and|or|nor)\s+)?)+"
# "avoid the words 'very' and 'really'", "don't use the word sorry", "leave out these terms: synergy, leverage"
_AVOID_QUOTED_RE = re.compile(r"\b" + _LEAVE_OUT + r"\s+(?:the\s+|any\s+of\s+the\s+|these\s+|any\s+)?(?:following\s+)?"
                              r"(?:(?:key)?words?|terms?|phrases?)?\s*(?:like\s+|such\s+as\s+)?:?\s*\[?("
                              + _QUOTED_LIST + ")", re.I)
_AVOID_WORD_RE = re.compile(r"\b" + _LEAVE_OUT + r"\s+the\s+(?:key)?word\s+" + _WORD + r"\b", re.I)
_AVOID_LIST_RE = re.compile(r"\b" + _LEAVE_OUT + r"\s+(?:the\s+|these\s+|any\s+of\s+the(?:se)?\s+)?(?:following\s+)?"
                            r"(?:(?:key)?words|terms|phrases)\s*:\s*([A-Za-z][\w'-]*(?:\s*,\s*(?:and\s+|or\s+)?"
                            r"[A-Za-z][\w'-]*|\s+(?:and|or)\s+[A-Za-z][\w'-]*)*)", re.I)
# "don't use the word 'very' more than twice" limits the word (word_times): it does not ban it.
_LIMIT_AFTER_RE = re.compile(r"\s*(?:more\s+than|over|above|beyond|at\s+most|no\s+more\s+than|fewer\s+than|"
                             r"less\s+than|too\s+(?:often|much|many)|once|twice|thrice|" + _N + r"\s+times)\b", re.I)
# A limit a few words on ("... should not appear in it more than 3 times"): a count, not a ban.
_LIMIT_LATER = r"[^.;!?\n]{0,24}?\b(?:more\s+than|over|above|beyond|at\s+most|\d+\s+times"
_LIMIT_LATER_RE = re.compile(_LIMIT_LATER + r"|once|twice)\b", re.I)
# "don't use the words cheap or budget": an unquoted list that runs to the end of the clause.
_AVOID_WORDS_RE = re.compile(r"\b" + _LEAVE_OUT + r"\s+(?:the\s+|these\s+)?(?:key)?(?:words|terms)\s+"
                             r"([A-Za-z][\w'-]*(?:\s*,\s*[A-Za-z][\w'-]*)*\s*,?\s+(?:and|or|nor)\s+[A-Za-z][\w'-]*)"
                             r"\s*(?=[.;!?\n]|$)", re.I)
_NOT_APPEAR_RE = re.compile(r"\b(?:word|keyword|term|phrase)s?\s+(" + _QUOTED_LIST + r")\s+(?:should|must|may|can|"
                            r"is\s+to|are\s+to)\s*(?:not|n't|never)\s+(?:appear|be\s+used|show\s+up|be\s+(?:said|"
                            r"mentioned|included))|(" + _QUOTED_LIST + r")\s+(?:is|are)\s+(?:banned|forbidden|"
                            r"off[\s-]limits|not\s+allowed)", re.I)
_NO_LETTER_RE = re.compile(r"(?:" + _LEAVE_OUT + r"|\bno)\s+(?:the\s+|any\s+)?letter\s+[\"'\u201c\u2018]?([a-z])\b"
                           r"[\"'\u201d\u2019]?(?!\s+(?:more|over|above|beyond|\d|[a-z]+\s+times))"
                           r"|\bletter\s+[\"'\u201c\u2018]?([a-z])\b[\"'\u201d\u2019]?\s+(?:should|must|may|can)\s*"
                           r"(?:not|n't|never)\s+(?:appear|be\s+used|show\s+up)(?!" + _LIMIT_LATER + r"))", re.I)

# --- The request repeated first ---------------------------------------------------------------------------------
# "First repeat my question word for word, then answer", "copy the request above exactly before you reply"
_REPEAT_RE = re.compile(
    r"\b(?:repeat|copy|echo|reproduce|restate|past(?:e|es|ed|ing)\b)\w*\b[^\n.]{0,40}?\b(?:request|prompt|question|"
    r"task|instruction|text|sentence|line|query|message)s?\b"
    # "copy the text below into a table": the text moved into another form, not said back
    r"(?!\s+(?:(?:below|above|here)\s+)?(?:into|onto|in\s+an?|as\s+an?|to\s+an?)\b)"
    r"(?=[^\n]{0,120}?\b(?:word\s+(?:for|by)\s+word|verbatim|"
    r"exactly|without\s+chang|unchanged|as\s+it\s+is|as\s+(?:I\s+)?(?:written|wrote|typed)|first|before|then)\b)"
    r"|\b(?:first|before\s+(?:you\s+)?(?:answer|reply|respond)\w*)\b[^\n.]{0,30}?\b(?:repeat|copy|echo|reproduce)\w*\b"
    r"[^\n.]{0,40}?\b(?:request|prompt|question|task|instruction|text|sentence|line|query|message)s?\b"
    # "start your reply by writing out my request below exactly as it is"
    r"|\b(?:writ|typ)\w*\s+out\s+(?:my|the|this|that|your)\s+(?:\w+\s+)?(?:request|prompt|question|query)\b"
    r"(?=[^\n]{0,80}?\b(?:word\s+(?:for|by)\s+word|verbatim|exactly|without\s+chang|unchanged|as\s+it\s+is)\b)"
    # "I need the question at the top of your reply exactly as I typed it"
    r"|\b(?:my|the|this)\s+(?:request|prompt|question|query)\s+(?:at\s+the\s+(?:top|start|beginning)\s+of|to\s+"
    r"(?:open|start|begin))\b(?=[^\n]{0,80}?\b(?:word\s+(?:for|by)\s+word|verbatim|exactly|unchanged|without\s+"
    r"chang|no\s+changes|as\s+I\s+(?:typed|wrote|asked)\s+it)\b)",
    re.I)
_REPEAT_QUOTED_RE = re.compile(r"\b(?:repeat|copy|echo|reproduce)\w*\s+(?:the\s+\w+\s+)?" + QUOTED
                               + r"\s+(?:word\s+(?:for|by)\s+word|verbatim|exactly|unchanged|without\s+chang\w*|first|"
                                 r"before)", re.I)

def _num(text: str | None) -> int | None:
    if text is None:
        return None
    return _ONE.get(text.lower().strip()) or word_number(text)


def _first(groups: tuple) -> str | None:
    return next((g for g in groups if g), None)


def _clause_before(task: str, pos: int) -> str:
    """The text of the clause ``pos`` is in, up to ``pos``."""
    starts = [m.end() for m in re.finditer(_CLAUSE_END, task[:pos])]
    return task[starts[-1] if starts else 0:pos]


def _sentence_before(task: str, pos: int) -> str:
    """The text of the sentence ``pos`` is in, up to ``pos``."""
    starts = [m.end() for m in re.finditer(r"[.!?\n](?=\s|$)|\n", task[:pos])]
    return task[starts[-1] if starts else 0:pos]


def _case(task: str) -> str | None:
    """"lowercase", "uppercase" or None: what every case word about the whole answer asks for (None when nothing
    does, or when they disagree)."""
    said = set()
    for m in _CASE_RE.finditer(task):
        before = _clause_before(task, m.start())
        if _PART_BEFORE_RE.search(before) or _QUESTION_RE.match(_sentence_before(task, m.start()) + task[m.start():]):
            continue
        lower = m.group("lower") is not None
        word = (m.group("lower") or m.group("caps")).lower()
        after = task[m.end():]
        if _NEGATED_BEFORE_RE.search(before):
            # "no capital letters", "without capitalization": the other case; "not all caps", "not in lowercase":
            # nothing said about the whole answer.
            if not _UNIVERSAL_BEFORE_RE.search(before) and not re.search(r"\bin\s+$", before, re.I) and \
                    _WHOLE_AFTER_RE.match(after) and not word.startswith("all"):
                said.add("uppercase" if lower else "lowercase")
            continue
        if word.startswith("capitali"):
            continue  # "use proper capitalization" asks for no case
        whole = _WHOLE_BEFORE_RE.search(before) or word.startswith("all") or re.match(r"\s*only\b", after, re.I)
        if not (whole or _USE_BEFORE_RE.search(before)):
            continue
        after_re = _BARE_CAPITALS_AFTER_RE if word == "capitals" else _WHOLE_AFTER_RE
        # "in lowercase letters about ..." has its noun; "in lowercase handwriting" describes another one
        has_noun = whole and re.search(r"(?:letters?|characters?)$", word) and \
            not re.match(r"\s+of\b(?!\s+any)", after, re.I)
        if has_noun or after_re.match(after):
            said.add("lowercase" if lower else "uppercase")
    if _NO_CAPITALIZING_RE.search(task):
        said.add("lowercase")
    if _CAPITALIZE_ALL_RE.search(task):
        said.add("uppercase")
    return said.pop() if len(said) == 1 else None


def _no_commas(task: str) -> bool:
    for m in _NO_COMMAS_RE.finditer(task):
        gap = m.group("gap") or ""
        if not (_NOT_A_BAN_RE.search(gap) or _ANY_NUMBER_RE.search(gap)):
            return True
    return False


def _highlights(task: str) -> int | None:
    """The least number of marked passages the task asks for, or None."""
    for pattern in _HIGHLIGHT_RES:
        for m in pattern.finditer(task):
            rest = re.split(r"(?<=[.!?])\s|\n", task[m.start():], maxsplit=1)[0]
            # "highlight three reasons" is "point out"; "highlight three phrases" or "... with asterisks" is markup.
            if pattern is _HIGHLIGHT_RES[0] and not re.search(_TEXT_UNITS + r"$", m.group("what").strip(), re.I) \
                    and not _MARKUP_RE.search(_clause_before(task, m.start()) + rest):
                continue
            if (n := _num(m.group(1))) is not None:
                return n
    if m := _HIGHLIGHT_EACH_RE.search(task) or _MARK_EACH_RE.search(task):
        unit = m.group("unit").rstrip("s")
        if count := re.search(r"\b" + _COUNT + r"[\s-]+(?:[\w'-]+\s+){0,2}?" + unit + r"s?\b", task, re.I):
            return _num(count.group(1))
    if _HIGHLIGHT_SOME_RE.search(task) and _MARKUP_RE.search(task):
        return 1
    return None


def _placeholders(task: str) -> int | None:
    for pattern in _PLACEHOLDER_RES:
        if (m := pattern.search(task)) and not _NEGATED_BEFORE_RE.search(_clause_before(task, m.start())):
            return _num(m.group(1))
    m = _PLACEHOLDERS_ANY_RE.search(task)
    if m and not _NEGATED_BEFORE_RE.search(_clause_before(task, m.start()) + " "):
        return 1
    if m := _BRACKET_BLANKS_RE.search(task):
        return _num(count.group(1)) if (count := _OF_THEM_RE.search(m.group(0))) else 1
    return None


def _postscript(task: str) -> str | None:
    """The marker of the postscript the task asks for, as the task writes it, or None."""
    for m in _POSTSCRIPT_RE.finditer(task):
        before = _clause_before(task, m.start())
        if _NEGATED_BEFORE_RE.search(before) or not _POSTSCRIPT_ASKED_RE.search(before + task[m.end():m.end() + 40]):
            continue
        markers = _MARKER_RE.findall(task)
        marker = max(markers, key=lambda s: s.count("P")) if markers else "PS"
        return ".".join(c for c in marker.upper() if c in "PS") + "."
    return None


def _sections(task: str) -> dict[str, Any] | None:
    marker = _SECTION_MARKER_RE.search(task)
    if marker is None:
        return None
    word = marker.group(1)
    numbered = re.findall(r"\b" + re.escape(word) + r"\s+\d{1,3}\b", task)
    if not (re.search(r"\s(?:X|N|#|\{|<|\[)", marker.group(0)) or len(set(numbered)) > 1
            or re.search(r"\b(?:each|every)\b", marker.group(0), re.I)):
        return None  # "Begin with Step 1" names one step: it shows no marker for each part
    units = {word.lower()} | {u.group(1).lower() for u in _SECTION_UNIT_RE.finditer(task)}
    nouns = "|".join(re.escape(u) for u in sorted(units, key=len, reverse=True) if len(u) > 2)
    counts = re.finditer(r"\b(?:at\s+least\s+|exactly\s+)?" + _COUNT + r"[\s-]+(?:[\w'-]+\s+)?(?:" + nouns
                         + r")s?\b", task, re.I)
    # "Day 1 Day 2" shows the marker: the 1 after "Day" numbers a part, it does not count them
    count = next((c for c in counts if not re.search(re.escape(word) + r"\s*$", task[:c.start()])), None)
    return None if count is None else {"kind": "sections", "marker": word, "count": _num(count.group(1))}


def _sentences(task: str) -> list[dict[str, Any]]:
    found = []
    for m in _SENTENCE_RANGE_RE.finditer(task):
        low, high = _num(m.group(1) or m.group(3)), _num(m.group(2) or m.group(4))
        if low is not None and high is not None and not _per_part(task, m):
            found.append({"kind": "sentences", "min": low, "max": high})
    if found:
        return found
    read: list[tuple[int, int]] = []
    for pattern, relation in _SENTENCES_RES:
        for m in pattern.finditer(task):
            # "less than a total of 10 sentences" is read once, not again as "of 10 sentences"
            # "each game has a name, a player count and a one-sentence reason": the adjective names a part, however
            # far the "each" stands before it in the clause
            if m.re is _N_SENTENCE_RE and re.search(r"\beach\b", _clause_before(task, m.start()), re.I):
                continue
            if not _per_part(task, m) and not any(m.start() < end and start < m.end() for start, end in read):
                read.append(m.span())
                found.append({"kind": "sentences", **_bound(relation or m.group(1), _num(m.group(2)))})
    return found


def _per_part(task: str, m: re.Match) -> bool:
    return bool(_PER_PART_BEFORE_RE.search(_clause_before(task, m.start()))
                or _PER_PART_AFTER_RE.match(task[m.end():]))


def _negated(task: str, m: re.Match) -> bool:
    """Whether a negation governs the count at ``m``: in its clause, after the last comma ("No commas, and the letter
    n at least four times" asks for four; "don't use z and q more than once" limits both)."""
    part = re.split(r"[,;]|\bbut\b", _clause_before(task, m.start()), flags=re.I)[-1]
    # or within the count's own words: "the letter n should not appear more than 3 times"
    return bool(re.search(_NEGATION, part, re.I) or re.search(r"\b(?:should|must|may|can)(?:\s+not\b|n't)",
                                                             m.group(0), re.I))


def read_caps_words(task: str) -> dict[str, Any] | None:
    """How many words in capital letters the answer may or must have, where the task counts them."""
    for k, pattern in enumerate(_CAPS_WORDS_RES):
        for m in pattern.finditer(task):
            before = task[:m.start()]
            if LENGTH_BEFORE_RE.search(before) or (k == 1 and re.search(_RELATION + r"\s+$", before, re.I)):
                continue  # "a story of 200 words in all caps": its length; a bound before: the first pattern's
            if k == 1 and re.search(r"(?:\bto|\bor|\band|-|\u2013)\s*$", before, re.I):
                continue  # "3 to 5 words in capitals": a range, left unread rather than misread
            relation, n = m.group(1), _num(m.group(2))
            if n is None or n > MAX_CAPS_WORDS:
                continue
            if not relation and (after := _RELATION_AFTER_RE.match(task, m.end())):
                relation = "at most" if after.group("most") else "at least"  # "two all-caps words at most"
            return {"kind": "caps_words", **_times(relation, n, _negated(task, m))}
    return None


def _times(relation: str | None, n: int | None, negated: bool) -> dict[str, int | None]:
    """The bound of a count; under a negation it flips: "avoid the letter i more than twice" is at most 2."""
    if not negated:
        return _bound(relation, n)
    if n is None:
        return {"min": None, "max": None}
    relation = re.sub(r"\s+", " ", (relation or "more than").lower())
    return {"min": None, "max": n - 1 if relation in ("at least", "a minimum of", "minimum of") else n}


def read_form(task: str) -> list[dict[str, Any]]:
    """The form instructions in ``task`` as JSON-safe dicts ({"kind", ...})."""
    found: list[dict[str, Any]] = []
    if case := _case(task):
        found.append({"kind": case})
    if _no_commas(task):
        found.append({"kind": "no_commas"})
    if (_QUOTED_RE.search(task) or any(_ANSWER_SUBJECT_RE.match(_sentence_before(task, m.start()))
                                       for m in _QUOTED_PASSIVE_RE.finditer(task))) \
            and not _SINGLE_QUOTES_RE.search(task):
        found.append({"kind": "quoted"})
    if m := _END_RE.search(task):
        phrase = _first(m.groups())
        if phrase and len(re.findall(r"\w", phrase)) >= 2:
            found.append({"kind": "ends_with", "text": phrase.strip()})
    if (m := _JSON_RE.search(task)) and not _JSON_SUBJECT_RE.search(m.group("gap") or ""):
        found.append({"kind": "json"})
    if _TITLE_RE.search(task):
        found.append({"kind": "title"})
    if (n := _highlights(task)) is not None:
        found.append({"kind": "highlights", "min": n or 1})
    if (n := _placeholders(task)) is not None:
        found.append({"kind": "placeholders", "min": n or 1})
    if marker := _postscript(task):
        found.append({"kind": "postscript", "marker": marker})
    if _DIVIDER_RE.search(task) and (m := _PARAGRAPHS_RE.search(task)):
        found.append({"kind": "paragraphs", "count": _num(m.group(1))})
    if sections := _sections(task):
        found.append(sections)
    if _TWO_SEPARATOR_RE.search(task) and _TWO_RE.search(task):
        found.append({"kind": "two_responses"})
    found += _sentences(task)
    for pattern in _WORD_TIMES_RES:
        for m in pattern.finditer(task):
            word = _first(m.groups()[:m.re.groups - 3])  # the quoted or bare word, before relation and count
            if not word or word.lower() in _STOPWORDS:
                continue
            relation, n = m.group(m.re.groups - 2), _num(m.group(m.re.groups - 1) or m.group(m.re.groups))
            if "or more" in m.group(0).lower():
                relation = relation or "at least"
            if relation is None and (after := _RELATION_AFTER_RE.match(task, m.end())):
                relation = "at most" if after.group("most") else "at least"  # "two times at most"
            found.append({"kind": "word_times", "word": word, **_times(relation, n, _negated(task, m))})
    if caps := read_caps_words(task):
        found.append(caps)
    for m in _LETTER_TIMES_RE.finditer(task):
        found.append({"kind": "letter_times", "letter": m.group(1).lower(),
                      **_times(m.group(2), _num(m.group(3) or m.group(4)), _negated(task, m))})
    for m in _NO_LETTER_RE.finditer(task):
        found.append({"kind": "letter_times", "letter": (m.group(1) or m.group(2)).lower(), "min": None, "max": 0})
    for m in _AVOID_QUOTED_RE.finditer(task):
        if not _LIMIT_AFTER_RE.match(task, m.end()):
            found += [{"kind": "avoid_word", "word": _first(q)} for q in re.findall(QUOTED, m.group(1))]
    for m in _AVOID_WORD_RE.finditer(task):
        if m.group(1).lower() not in _STOPWORDS and not _LIMIT_AFTER_RE.match(task, m.end()):
            found.append({"kind": "avoid_word", "word": m.group(1)})
    for m in [*_AVOID_LIST_RE.finditer(task), *_AVOID_WORDS_RE.finditer(task)]:
        found += [{"kind": "avoid_word", "word": w} for w in re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+",
                                                                       m.group(1)) if w]
    for m in _NOT_APPEAR_RE.finditer(task):
        if _LIMIT_LATER_RE.match(task, m.end()):
            continue  # "should not appear more than twice" limits the word (word_times): it does not ban it
        found += [{"kind": "avoid_word", "word": _first(q)} for q in re.findall(QUOTED, m.group(1) or m.group(6))]
    if (request := read_repeat(task)) is not None:
        found.append({"kind": "repeat_request", "text": request})
    return _once([f for f in found if _complete(f)])


def _once(instructions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each instruction once, in the order first read (two phrasings of one instruction read the same)."""
    seen: list[dict[str, Any]] = []
    for instruction in instructions:
        if instruction not in seen:
            seen.append(instruction)
    return seen


def _complete(instruction: dict[str, Any]) -> bool:
    """Every value read, or for a bound at least one end of it."""
    if "min" in instruction or "max" in instruction:
        return instruction.get("min") is not None or instruction.get("max") is not None
    return all(v is not None for v in instruction.values())


def read_repeat(task: str) -> str | None:
    """The request a task asks to be repeated word for word before the answer: quoted in the instruction, or
    the text on the other side of the instruction's paragraph (``request_beside``)."""
    if m := _REPEAT_QUOTED_RE.search(task):
        return _first(m.groups())
    m = _REPEAT_RE.search(task)
    return None if m is None else request_beside(task, m.start(), m.end())


def request_beside(task: str, start: int, end: int) -> str | None:
    """The request that an instruction to repeat it, at ``task[start:end]``, points to: the text on the other side
    of the instruction's paragraph, after it when the instruction opens the task, else before it."""
    start = task.rfind("\n", 0, start) + 1
    end = task.find("\n\n", end)
    end = len(task) if end == -1 else end
    before, after = task[:start].strip(), task[end:].strip()
    if not before and after:
        return after
    return before or None


def _bound(relation: str | None, n: int | None) -> dict[str, int | None]:
    """{"min", "max"} for "at least 5" (5, None), "less than 5" (None, 4), "at most 5" (None, 5), "exactly 5"
    (5, 5), ...; no relation is "at least"."""
    relation = re.sub(r"\s+", " ", (relation or "at least").lower())
    if n is None:
        return {"min": None, "max": None}
    if relation in ("at least", "no fewer than", "no less than", "a minimum of", "minimum of"):
        return {"min": n, "max": None}
    if relation in ("more than", "over"):
        return {"min": n + 1, "max": None}
    if relation in ("less than", "fewer than", "under"):
        return {"min": None, "max": n - 1}
    if relation in ("at most", "no more than", "up to", "a maximum of", "maximum of"):
        return {"min": None, "max": n}
    return {"min": n, "max": n}
