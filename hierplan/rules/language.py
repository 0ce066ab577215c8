"""The language a task asks its answer to be written in ("write the email in German only", "a haiku in Italian and
nothing else", "respond in French, please"), and whether an answer is in it.

Read from the task's words: "in German" said of the answer ("respond in French", "write me a poem in Italian",
"your reply should be in Hindi", "translate this into Spanish") or as its only language ("in German only", "no other
language"), where nothing but the end of the clause, "only", "and nothing else" or "language" follows. "Order food
in Japanese", "greetings in French", "a degree in Chinese" and "how do you say it in Korean?" ask for no language.
Checked by langdetect (a port of Google's language-detection) on the answer's prose lines of LANGUAGE_LINE_WORDS
words or more, only when they hold LANGUAGE_MIN_WORDS words: on a line or two, or a list of names, it guesses.
"""

from __future__ import annotations

import re
from typing import Any

from hierplan.config import LANGUAGE_LINE_WORDS, LANGUAGE_MIN_SHARE, LANGUAGE_MIN_WORDS
from hierplan.rules.text import split_code, words

# The languages a small local model writes passably, by name, with their ISO 639-1 codes (langdetect's).
LANGUAGES = {"english": "en", "german": "de", "french": "fr", "spanish": "es", "italian": "it", "portuguese": "pt",
             "dutch": "nl", "swedish": "sv", "norwegian": "no", "danish": "da", "finnish": "fi", "polish": "pl",
             "czech": "cs", "russian": "ru", "ukrainian": "uk", "greek": "el", "turkish": "tr", "arabic": "ar",
             "hebrew": "he", "persian": "fa", "farsi": "fa", "hindi": "hi", "bengali": "bn", "urdu": "ur",
             "tamil": "ta", "telugu": "te", "marathi": "mr", "gujarati": "gu", "kannada": "kn", "punjabi": "pa",
             "nepali": "ne", "thai": "th", "vietnamese": "vi", "indonesian": "id", "korean": "ko",
             "japanese": "ja", "chinese": "zh", "mandarin": "zh", "swahili": "sw", "romanian": "ro",
             "hungarian": "hu", "bulgarian": "bg", "croatian": "hr", "slovak": "sk", "slovenian": "sl",
             "lithuanian": "lt", "latvian": "lv", "estonian": "et", "albanian": "sq", "macedonian": "mk",
             "afrikaans": "af", "tagalog": "tl", "welsh": "cy", "somali": "so"}
_NAME = r"(" + "|".join(LANGUAGES) + r")"
_IN = r"\b(?:in|into)\s+(?:only\s+)?(?:the\s+)?" + _NAME + r"(?:\s+language)?"
_AFTER = r"(?=\s*(?:[.,;:!?)\n]|$|only\b|and\s+(?:nothing|no)\b|(?:language|please)\b))"
_PIECE = (r"(?:answer|reply|response|poem|story|letter|email|e-mail|essay|note|message|post|blog\s+post|song|haiku|"
          r"summary|speech|text|paragraph|review|description|invitation|article|tweet|riddle|joke|limerick|ad|"
          r"advertisement|pitch|cover\s+letter|rap|dialogue|proposal|report)")
_ANSWER_VERB = r"\b(?:respond|reply|answer|write|written|compose|draft|translate\w*|put|rewrite)"
# Where "in German" is about the answer: said of the answer or its writing, or said to be the only language.
_LANGUAGE_RES = (
    # "respond in French", "write it in German", "write me a poem in Italian", "translate this into Spanish"
    re.compile(_ANSWER_VERB + r"\s+(?:(?:it|this|that|everything|all|the\s+whole\s+thing|(?:me\s+)?(?:a|an|the|your|my|"
               r"this|one)\s+(?:[\w'-]+\s+){0,2}?" + _PIECE + r")\s+)?" + _IN + _AFTER, re.I),
    # "your whole reply should be in the Hindi language", "the email must be written in German"
    re.compile(r"\b(?:" + _PIECE + r"|everything|it)\s+(?:should|must|has\s+to|needs\s+to|will|is\s+to)\s+be\s+"
               r"(?:written\s+)?(?:entirely\s+|only\s+|all\s+|wholly\s+)?" + _IN + _AFTER, re.I),
    # "in German only", "only in Italian", "entirely in Hindi", "Swahili only", "just the Spanish please"
    re.compile(r"\b(?:only|entirely|solely|wholly|exclusively)\s+" + _IN + r"\b|" + _IN + r"\s+only\b|\b" + _NAME
               + r"\s+only\b|(?<!speak )(?<!speaks )(?<!know )\bjust\s+(?:the\s+|in\s+)?" + _NAME
               + r"\b(?!\s+(?:word|name|term|phrase|version|translation)s?\b)", re.I),
    # "using only the Punjabi language", "the language should be French"
    re.compile(r"\b(?:using|use)\s+(?:only\s+)?(?:the\s+)?" + _NAME + r"\s+language\b|\blanguages?\s*(?:is|should\s+"
               r"be|must\s+be|:)\s*" + _NAME + r"\b", re.I),
)
# A sentence that says the answer has no other language makes its "in Italian" the answer's language.
_NO_OTHER_RE = re.compile(r"\bno\s+other\s+language|\bnothing\s+else\b|\band\s+no\s+other\b", re.I)
_ANY_IN_RE = re.compile(_IN + _AFTER, re.I)
# "a language other than English" names what the answer must not be in: no language to check.
_OTHER_THAN_RE = re.compile(r"\b(?:other\s+than|not|except|from|besides)\s+(?:in\s+|into\s+)?(?:the\s+)?$", re.I)
# "How do you say thank you in Japanese?": a question about a word, answered in the language of the question.
_ABOUT_A_WORD_RE = re.compile(r"\bhow\s+(?:do|would|can|to)\s+(?:you\s+|i\s+|we\s+)?(?:say|write|spell|pronounce)|"
                              r"\bwhat\s+(?:is|are|'s)\s+(?:the\s+)?(?:word|words|name|term)|\bcalled\b|\bmeans?\b",
                              re.I)


def read_language(task: str) -> dict[str, Any] | None:
    """The instruction to write the answer in one language ({"kind": "language", "language", "code"}), or None
    when the task names none, or more than one."""
    matches = [m for pattern in _LANGUAGE_RES for m in pattern.finditer(task)]
    for sentence in re.finditer(r"[^.!?\n]+", task):
        if _NO_OTHER_RE.search(sentence.group()):
            matches += list(_ANY_IN_RE.finditer(task, sentence.start(), sentence.end()))
    named = set()
    for m in matches:
        group = next(i for i, g in enumerate(m.groups(), 1) if g)
        before = task[:m.start(group)]  # _OTHER_THAN_RE reads its "in (the)" itself
        sentence = re.split(r"[.!?\n]\s", before)[-1]
        if not _OTHER_THAN_RE.search(before) and not _ABOUT_A_WORD_RE.search(sentence):
            named.add(m.group(group).lower())
    codes = {LANGUAGES[name] for name in named}
    if len(codes) != 1:
        return None
    name = sorted(named)[0]
    return {"kind": "language", "language": name.capitalize(), "code": codes.pop()}


def _sentences_of(text: str) -> str:
    """The answer's prose lines of LANGUAGE_LINE_WORDS words or more: a list of names or places says little of the
    language it is written in (langdetect read twenty capitals as German)."""
    lines = split_code(text)[0].splitlines()
    return "\n".join(line for line in lines if len(words(line)) >= LANGUAGE_LINE_WORDS)


def language_shares(text: str) -> dict[str, float] | None:
    """langdetect's share for each language it finds in ``text``'s prose (seeded, so one text always reads the
    same; zh-cn and zh-tw as zh), or None when there is too little prose to tell."""
    prose = _sentences_of(text)
    if len(words(prose)) < LANGUAGE_MIN_WORDS:
        return None
    from langdetect import DetectorFactory, detect_langs  # lazy: its profiles load on the first call
    from langdetect.lang_detect_exception import LangDetectException

    DetectorFactory.seed = 0
    try:
        found = detect_langs(prose)
    except LangDetectException:
        return None
    shares: dict[str, float] = {}
    for language in found:
        code = language.lang.split("-")[0]
        shares[code] = shares.get(code, 0.0) + language.prob
    return shares


def language_problem(instruction: dict[str, Any], text: str) -> str | None:
    """A problem only where langdetect gives the language asked for under LANGUAGE_MIN_SHARE of the prose."""
    shares = language_shares(text)
    if shares is None or shares.get(instruction["code"], 0.0) >= LANGUAGE_MIN_SHARE:
        return None
    return (f"it is not written in {instruction['language']}: write all of it in {instruction['language']}, "
            f"no other language")
