"""One Chinese term per idea, the one d2l-zh uses, in every Chinese text of
the repository: hints, mistake descriptions, messages, notes, questions
and their keys, READMEs, TODO specs, docstrings and notebooks."""

import re
from pathlib import Path

import pytest

from m2t import ROOT

# d2l-zh's term (or the course's, where d2l-zh names none), and the
# variants no text may use instead. A variant inside a term (位置前馈网络
# would be inside 基于位置的前馈网络 if the 的 were dropped) would be found
# in every correct text: test_no_term_contains_a_variant says so.
TERMS: dict[str, tuple[str, ...]] = {
    "强制教学": ("教师强制", "老师强制"),
    "规范化": ("归一化", "批标准化", "批量标准化", "层标准化"),
    "批量规范化": ("批规范化",),
    "掩蔽": ("屏蔽", "遮蔽", "遮掩"),
    "束搜索": ("集束搜索", "波束搜索", "柱搜索"),
    "贪心搜索": ("贪婪搜索",),
    "困惑度": ("迷惑度", "混乱度"),
    "梯度裁剪": ("梯度截断", "梯度剪裁", "梯度修剪"),
    "重置门": ("复位门", "重设门"),
    "候选隐状态": ("候选隐藏状态", "候选状态"),
    "隐状态": ("隐藏状态", "隐含状态"),
    "记忆元": ("记忆单元", "记忆细胞"),
    "加性注意力": ("加法注意力",),
    "缩放点积注意力": ("点积缩放注意力", "点积放缩注意力", "放缩点积注意力"),
    "多头注意力": ("多头部注意力",),
    "自注意力": ("自我注意力",),
    "基于位置的前馈网络": ("逐位前馈网络", "逐点前馈网络", "位置前馈网络"),
    "残差连接": ("残余连接",),
    "暂退法": ("丢弃法", "随机失活"),
    "汇聚": ("池化",),
    "词元": ("令牌",),
    "词表": ("词汇表",),
    "解码器": ("译码器",),
    "过短惩罚": ("简短惩罚",),
    "评分器": ("评分程序",),
}
"""Term -> its forbidden variants."""

TEXT_SUFFIXES = {".md", ".toml", ".py", ".tmpl", ".txt", ".ipynb", ".yml"}
ROOTS = (
    "lessons",
    "graders",
    "solutions",
    "notebooks",
    "m2t",
    "m2t_data",
    "training",
    "docs",
    "tests",
)
SKIP_DIRS = {"__pycache__", ".ipynb_checkpoints"}
HERE = Path(__file__).resolve()
CJK = re.compile(r"[\u4e00-\u9fff]")


def chinese_texts(root: Path = ROOT) -> dict[Path, str]:
    """Every text file under `root`'s course folders and top level that
    holds a Chinese character -> its text (this file's term list left
    out)."""
    files = [p for p in root.glob("*.md")]
    for name in ROOTS:
        files += [
            p
            for p in (root / name).rglob("*")
            if p.suffix in TEXT_SUFFIXES
            and p.is_file()
            and not SKIP_DIRS & set(p.relative_to(root).parts)
        ]
    texts = {}
    for path in sorted(files):
        if path.resolve() == HERE:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if CJK.search(text):
            texts[path] = text
    return texts


def variants_in(texts: dict[Path, str], root: Path = ROOT) -> list[str]:
    """'path:line: variant -> term' for each forbidden variant found."""
    found = []
    for path, text in texts.items():
        for n, line in enumerate(text.splitlines(), start=1):
            for term, variants in TERMS.items():
                for variant in variants:
                    if variant in line:
                        where = path.relative_to(root)
                        found.append(f"{where}:{n}: {variant} -> {term}")
    return found


@pytest.fixture(scope="module")
def texts():
    return chinese_texts()


def test_the_chinese_texts_are_found(texts):
    names = {p.relative_to(ROOT).as_posix() for p in texts}
    for expected in (
        "lessons/hints/l16_attention_scoring.toml",
        "graders/messages/mistakes.zh.toml",
        "m2t/messages/zh.toml",
        "lessons/notes/l16_attention_scoring.md",
        "graders/questions/l16.toml",
    ):
        assert expected in names, f"{expected} is not scanned"


def test_no_text_uses_a_variant_of_a_term(texts):
    found = variants_in(texts)
    assert not found, "use d2l-zh's term:\n" + "\n".join(found)


def test_every_term_is_used(texts):
    joined = "\n".join(texts.values())
    unused = [term for term in TERMS if term not in joined]
    assert not unused, f"terms no Chinese text uses: {unused}"


def test_no_term_contains_a_variant():
    for variants in TERMS.values():
        for variant in variants:
            inside = [term for term in TERMS if variant in term]
            assert not inside, f"{variant} is inside {inside}"


def test_a_planted_variant_is_found(tmp_path):
    (tmp_path / "lessons" / "hints").mkdir(parents=True)
    hint = tmp_path / "lessons" / "hints" / "l99_demo.toml"
    hint.write_text(
        '[[todo]]\n[todo.zh]\nidea = "先做层规范化。"\n'
        'near = "用教师强制喂入目标序列，再做层归一化"\n',
        encoding="utf-8",
    )
    (tmp_path / "README.zh.md").write_text("集束搜索\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("beam search\n", encoding="utf-8")
    found = variants_in(chinese_texts(tmp_path), tmp_path)
    assert found == [
        "README.zh.md:1: 集束搜索 -> 束搜索",
        "lessons/hints/l99_demo.toml:4: 教师强制 -> 强制教学",
        "lessons/hints/l99_demo.toml:4: 归一化 -> 规范化",
    ]
