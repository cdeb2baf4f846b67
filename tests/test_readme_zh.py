"""The Chinese READMEs: each linked from the top of its English one,
holding the English one's code blocks unchanged, in the same order (the
commands are tested once, on the English README), and its outline: the
same headings, bullets and table rows, so a section or a convention added
to the English one is missed until the Chinese one has it too."""

import re

import pytest

from m2t import ROOT

TEMPLATES = ROOT / "m2t" / "authoring" / "templates"
PAIRS = [
    (ROOT / "README.md", ROOT / "README.zh.md"),
    (TEMPLATES / "README.student.md", TEMPLATES / "README.student.zh.md"),
]
IDS = ["README", "student edition"]


def code_blocks(text: str) -> list[str]:
    """The fenced code blocks of a Markdown text, with their info string."""
    return re.findall(r"^```.*?^```$", text, re.M | re.S)


def outline(text: str) -> list[str]:
    """The kind of each heading, bullet, numbered item and table row, in
    order ("##", "-", "1.", "|"), code blocks left out."""
    text = re.sub(r"^```.*?^```$", "", text, flags=re.M | re.S)
    kinds = []
    for line in text.splitlines():
        if m := re.match(r"(#+) |(- )|(\d+\. )|(\|)", line):
            kinds.append(m.group(0).strip())
    return kinds


def heading_then_link(text: str) -> str:
    """The first line after the title."""
    return text.split("\n\n", 2)[1]


@pytest.mark.parametrize("en, zh", PAIRS, ids=IDS)
def test_the_chinese_readme_is_linked_from_the_english_one(en, zh):
    assert heading_then_link(en.read_text()) == "[中文](README.zh.md)"
    assert heading_then_link(zh.read_text()) == "[English](README.md)"


@pytest.mark.parametrize("en, zh", PAIRS, ids=IDS)
def test_the_chinese_readme_keeps_every_code_block(en, zh):
    ours, theirs = code_blocks(zh.read_text()), code_blocks(en.read_text())
    assert len(ours) == len(theirs) > 1
    for n, (a, b) in enumerate(zip(ours, theirs, strict=True), start=1):
        assert a == b, f"{zh.name}: code block {n} differs from {en.name}'s"


@pytest.mark.parametrize("en, zh", PAIRS, ids=IDS)
def test_the_chinese_readme_has_the_english_outline(en, zh):
    assert outline(zh.read_text()) == outline(en.read_text()), (
        f"{zh.name}: its headings, bullets or table rows differ from "
        f"{en.name}'s: translate what was added"
    )


def test_a_changed_code_block_is_found():
    en = "# t\n\n[中文](README.zh.md)\n\n```bash\nm2t watch\n```\n"
    zh = "# t\n\n[English](README.md)\n\n```bash\nm2t watch 16\n```\n"
    assert code_blocks(en) != code_blocks(zh)
    assert code_blocks(en) == ["```bash\nm2t watch\n```"]
    assert outline(en + "- a bullet\n") == ["#", "-"]
