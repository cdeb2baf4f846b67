"""The course's two languages: which one a student reads, and the
catalogues of every text m2t and the graders print.

The language, in order of precedence:

1. `m2t --lang zh|en ...` (remembered in `.m2t/lang` for the next runs);
2. the environment variable `M2T_LANG` (`en` or `zh`);
3. what `m2t --lang` remembered (`settings.LANG_STATE`);
4. the system locale: `zh` when `LC_ALL`, `LC_MESSAGES` or `LANG` (the
   first one set) is a `zh_*` locale;
5. `en`.

The harness grades in process, so the graders read the same setting; the
sandboxed worker is handed `M2T_LANG` by `m2t.grading.worker`.

A catalogue is a folder of `en.toml` and `zh.toml` (or `NAME.en.toml` and
`NAME.zh.toml`): tables of keys -> text with named fields, e.g.

    [grade]
    score = "score {total}/{most} in {seconds}s ({what})"

looked up as `text("grade.score", total=..., ...)`. The fields are filled
in by code, numbers and shapes already formatted, so both languages show
the same figures. A key missing from the language asked for raises
`MissingText` in the full repository (tests and authoring: there is no silent
English fallback); a student edition or a Gradescope bundle falls back to
English, so a student is never stopped by a missing translation.
"""

from __future__ import annotations

import contextlib
import os
import re
import string
import textwrap
import unicodedata
from collections.abc import Iterator
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from m2t import ROOT
from m2t import settings
from m2t.settings import tomllib

__all__ = [
    "ENV",
    "LANGUAGES",
    "Catalogue",
    "MESSAGES",
    "MissingText",
    "choose",
    "columns",
    "fields",
    "from_locale",
    "language",
    "ljust",
    "of_submission",
    "remembered",
    "strict",
    "text",
    "title",
    "using",
    "wrap",
]

LANGUAGES = ("en", "zh")
"""The course's languages; English is the source of every text."""

ENV = "M2T_LANG"
"""The environment variable that sets the language (`en` or `zh`)."""

_LOCALE_VARS = ("LC_ALL", "LC_MESSAGES", "LANG")

_chosen: str | None = None
"""The language of this run when `m2t --lang` gave one (see `using`)."""


class MissingText(KeyError):
    """A catalogue has no text for a key in the language asked for."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


def _check(value: str, where: str) -> str:
    if value not in LANGUAGES:
        raise ValueError(
            f"{where}={value!r}: not a language of the course; use one of "
            f"{', '.join(LANGUAGES)}"
        )
    return value


def from_locale(environ: Mapping[str, str] | None = None) -> str:
    """`zh` when the first of LC_ALL, LC_MESSAGES, LANG that is set names
    a `zh_*` locale (`zh_CN.UTF-8`, `zh_TW`), else `en`."""
    environ = os.environ if environ is None else environ
    for name in _LOCALE_VARS:
        value = environ.get(name, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def remembered(path: Path | None = None) -> str | None:
    """The language `m2t --lang` saved, or None when none was.

    Raises:
        ValueError: the file holds something other than a language.
    """
    path = Path(path or settings.LANG_STATE)
    try:
        value = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return _check(value, str(path))


def of_submission(folder: Path) -> str | None:
    """The language a submission chose: its `.m2t/lang` (what `m2t --lang`
    remembered in the student's edition, which commits it), or None when it
    has none or the file holds anything else (a student's file: read at
    most a few bytes, never trusted)."""
    path = Path(folder) / settings.LANG_STATE.relative_to(ROOT)
    try:
        if not path.is_file() or path.is_symlink():
            return None
        with open(path, "rb") as f:
            value = f.read(16).decode("ascii", "replace").strip()
    except OSError:
        return None
    return value if value in LANGUAGES else None


def language() -> str:
    """The language of this run (see the module docstring for the order).

    Raises:
        ValueError: `M2T_LANG` or the remembered file holds a value other
            than `en` or `zh`, naming which and the value.
    """
    if _chosen is not None:
        return _chosen
    value = os.environ.get(ENV, "").strip()
    if value:
        return _check(value, ENV)
    return remembered() or from_locale()


def choose(value: str, remember: bool = True) -> str:
    """Check `value` (what `--lang` got) and, with `remember`, save it in
    `settings.LANG_STATE` for the next runs (quietly kept in memory only
    when `.m2t/` cannot be written, e.g. a read-only checkout).

    Raises:
        ValueError: `value` is not `en` or `zh`.
    """
    _check(value, "--lang")
    if remember:
        path = settings.LANG_STATE
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(value + "\n", encoding="utf-8")
    return value


@contextlib.contextmanager
def using(value: str | None) -> Iterator[str]:
    """Within the block, `language()` is `value` (None: unchanged): the
    language of one `m2t` run, given by `--lang`, whatever `M2T_LANG`
    says."""
    global _chosen
    saved = _chosen
    if value is not None:
        _chosen = _check(value, "--lang")
    try:
        yield language()
    finally:
        _chosen = saved


def strict() -> bool:
    """Whether a missing text is an error here: in the full repository
    (tests, authoring: it has solutions/mutants/) it is; elsewhere (a
    student edition, a Gradescope bundle) English stands in."""
    return (ROOT / "solutions" / "mutants").is_dir()


def _flatten(data: Mapping, prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, name + "."))
        elif isinstance(value, str):
            out[name] = value
        else:
            raise ValueError(f"{name}: a text must be a string, got {value!r}")
    return out


def fields(template: str) -> set[str]:
    """The named fields of `template` with their format specs, e.g.
    `{"total", "seconds:.1f"}`: both languages of a key must use the same."""
    return {
        name + (f":{spec}" if spec else "")
        for _, name, spec, _ in string.Formatter().parse(template)
        if name is not None
    }


class Catalogue:
    """One catalogue: `folder/[stem.]en.toml` and `folder/[stem.]zh.toml`.

    Args:
        folder: where the files are.
        stem: the files' name before the language (`mistakes` for
            `mistakes.zh.toml`); empty for `en.toml` and `zh.toml`.
    """

    def __init__(self, folder: Path, stem: str = ""):
        self.folder = Path(folder)
        self.stem = stem

    def path(self, lang: str) -> Path:
        name = f"{self.stem}.{lang}.toml" if self.stem else f"{lang}.toml"
        return self.folder / name

    def entries(self, lang: str) -> dict[str, str]:
        """Every key -> its template in `lang` (empty when the file is
        missing)."""
        return dict(_load(self.path(_check(lang, "lang"))))

    def get(self, key: str, lang: str | None = None) -> str | None:
        """The template of `key` in `lang` (default: `language()`), or
        None when the catalogue has none."""
        return _load(self.path(_check(lang or language(), "lang"))).get(key)

    def text(self, key: str, /, *, lang: str | None = None, **values) -> str:
        """The text of `key` in `lang` (default: `language()`), its fields
        filled from `values`.

        Raises:
            MissingText: no English text for `key`, or none in `lang`
                where missing texts are errors (a checkout).
            KeyError: a field of the template is not in `values`.
        """
        lang = lang or language()
        template = self.get(key, lang)
        if template is None and lang != "en" and not strict():
            template = self.get(key, "en")
        if template is None:
            raise MissingText(f"{self.path(lang)}: no text for {key!r}")
        return template.format_map(values)


@cache
def _load(path: Path) -> Mapping[str, str]:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    return _flatten(data)


MESSAGES = Catalogue(Path(__file__).parent / "messages")
"""What the harness prints (m2t/messages/en.toml, zh.toml)."""


def text(key: str, /, **values) -> str:
    """`MESSAGES.text(key, **values)` in the language of this run."""
    return MESSAGES.text(key, **values)


def title(lesson) -> str:
    """A lesson's title in the language of this run: curriculum.toml's
    `title` in English, `lesson_titles.<module>` of m2t/messages/zh.toml
    in Chinese."""
    lang = language()
    if lang == "en":
        return lesson.title
    found = MESSAGES.get(f"lesson_titles.{lesson.module}", lang)
    if found is None:
        if strict():
            raise MissingText(
                f"{MESSAGES.path(lang)}: no title for {lesson.module!r} "
                "in [lesson_titles]"
            )
        return lesson.title
    return found


def columns(text: str) -> int:
    """The columns `text` takes in a terminal: two for each wide (CJK)
    character, one for the others."""
    return sum(
        2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text
    )


def ljust(text: str, width: int) -> str:
    """`text` padded with spaces to `width` terminal columns (a table's
    cell: `str.ljust` counts a Chinese character as one column)."""
    return text + " " * max(0, width - columns(text))


_TOKENS = re.compile(r"\s+|[^\s\u2e80-\uffef]+|[\u2e80-\uffef]")
"""Spaces, a run of narrow characters (a word, `code`), one wide one."""
_NO_LINE_START = set("，。、；：！？）》」』】,.;:!?)")
"""Punctuation that stays at the end of the line before."""


def wrap(
    text: str,
    width: int = 79,
    indent: str = "",
    subsequent: str = "",
    break_on_hyphens: bool = False,
) -> str:
    """`textwrap.fill(text, width, initial_indent=indent,
    subsequent_indent=subsequent, break_on_hyphens=...)` for English; for
    text with Chinese, lines of at most `width` terminal columns broken
    between two Chinese characters or at spaces, never before a closing
    punctuation mark and never inside a run of narrow characters (a word,
    an identifier, a shape)."""
    if columns(text) == len(text):  # no wide character
        return textwrap.fill(
            text,
            width=width,
            initial_indent=indent,
            subsequent_indent=subsequent,
            break_on_hyphens=break_on_hyphens,
        )
    lines: list[str] = []
    line, fresh = indent, True  # fresh: nothing but the indent yet
    for token in _TOKENS.findall(" ".join(text.split())):
        if token.isspace():
            line += "" if fresh else " "
            continue
        fits = columns(line) + columns(token) <= width
        if fits or fresh or token[0] in _NO_LINE_START:
            line += token
        else:
            lines.append(line.rstrip())
            line = subsequent + token
        fresh = False
    lines.append(line.rstrip())
    return "\n".join(lines)
