"""Sources: instruction files (trusted only), Compact Instructions, skills on demand, archived evidence."""

from __future__ import annotations

from pathlib import Path

import pytest
from ctxbudget.archive import Archive
from ctxbudget.context.sources import (
    SkillLibrary,
    compact_instructions,
    evidence_item,
    find_instruction_files,
    load_compact_instructions,
    load_instruction_items,
    parse_front_matter,
)
from ctxbudget.errors import ArchiveError, InvalidPolicyError, SourceError, UsageError
from ctxbudget.messages.tokens import TiktokenCounter


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "AGENTS.md").write_text("# Root\nUse uv.\n## Compact Instructions\nKeep file paths.\n# Other\nx")
    (tmp_path / "CLAUDE.md").write_text("# Claude\nBe brief.")
    (tmp_path / "pkg" / "AGENTS.md").write_text("## compact   INSTRUCTIONS\nKeep API names.\n")
    (tmp_path / "pkg" / "sub" / "notes.md").write_text("not an instruction file")
    return tmp_path


class TestInstructionFiles:
    def test_untrusted_projects_are_never_read(self, project: Path) -> None:
        assert load_instruction_items(project, "pkg/sub", trusted=False) == []
        assert load_compact_instructions(project, "pkg/sub", trusted=False) is None

    def test_untrusted_does_not_even_touch_the_disk(self, tmp_path: Path) -> None:
        assert load_instruction_items(tmp_path / "missing", trusted=False) == []

    def test_files_from_root_down_to_cwd_agents_before_claude(self, project: Path) -> None:
        items = load_instruction_items(project, "pkg/sub", trusted=True)
        assert [i.id for i in items] == ["AGENTS.md", "CLAUDE.md", "pkg/AGENTS.md"]
        assert all(i.required and i.trust == "developer" and i.type == "instructions" for i in items)
        assert items[2].content == "## compact   INSTRUCTIONS\nKeep API names.\n"
        assert items[2].metadata["path"] == str((project / "pkg" / "AGENTS.md").resolve())

    def test_cwd_defaults_to_root_and_may_be_absolute(self, project: Path) -> None:
        assert [p.name for p in find_instruction_files(project)] == ["AGENTS.md", "CLAUDE.md"]
        assert len(find_instruction_files(project, project / "pkg")) == 3

    def test_cwd_outside_root_is_rejected(self, project: Path, tmp_path: Path) -> None:
        with pytest.raises(SourceError) as info:
            find_instruction_files(project / "pkg", project)
        assert info.value.field == "cwd"
        assert "not inside the project root" in str(info.value)

    def test_root_must_be_a_directory(self, tmp_path: Path) -> None:
        with pytest.raises(SourceError) as info:
            load_instruction_items(tmp_path / "nope", trusted=True)
        assert info.value.field == "root"
        assert isinstance(info.value, UsageError)

    def test_compact_instructions_of_every_file_are_joined_root_first(self, project: Path) -> None:
        assert load_compact_instructions(project, "pkg", trusted=True) == "Keep file paths.\n\nKeep API names."
        assert load_compact_instructions(project, trusted=True) == "Keep file paths."

    def test_no_section_anywhere_gives_none(self, tmp_path: Path) -> None:
        (tmp_path / "CLAUDE.md").write_text("# Just rules\n")
        assert load_compact_instructions(tmp_path, trusted=True) is None


class TestCompactInstructions:
    def test_section_runs_to_the_next_heading_of_same_or_higher_level(self) -> None:
        markdown = (
            "# Project\nintro\n## Compact Instructions\nkeep API names\n### Details\nand paths\n## Testing\nnot this\n"
        )
        assert compact_instructions(markdown) == "keep API names\n### Details\nand paths"

    def test_a_higher_level_heading_ends_it_too(self) -> None:
        assert compact_instructions("### Compact instructions\na\n# Top\nb") == "a"

    def test_runs_to_the_end_when_no_heading_follows(self) -> None:
        assert compact_instructions("## Compact Instructions\n\nline 1\n\nline 2\n\n") == "line 1\n\nline 2"

    @pytest.mark.parametrize(
        "heading",
        [
            "# Compact Instructions",
            "## compact instructions",
            "#### COMPACT\tINSTRUCTIONS ##",
            "## My compact  instructions",
        ],
    )
    def test_heading_match_is_case_and_space_insensitive(self, heading: str) -> None:
        assert compact_instructions(f"{heading}\nbody") == "body"

    def test_only_the_first_matching_heading_counts(self) -> None:
        assert compact_instructions("# Compact Instructions\nfirst\n# Compact Instructions\nsecond") == "first"

    def test_headings_inside_fenced_code_are_not_headings(self) -> None:
        markdown = (
            "```md\n# Compact Instructions\nfake\n```\n## Compact Instructions\nreal\n~~~\n# not the end\n~~~\nmore"
        )
        assert compact_instructions(markdown) == "real\n~~~\n# not the end\n~~~\nmore"

    @pytest.mark.parametrize(
        "markdown",
        [
            "",
            "# Something else\ntext",
            "Compact Instructions\nwithout a heading",
            "#Compact Instructions\nno space",
            "## Compact Instructions\n\n   \n## Next\nx",
        ],
    )
    def test_none_when_absent_or_blank(self, markdown: str) -> None:
        assert compact_instructions(markdown) is None


def write_skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class TestSkills:
    def test_front_matter_is_parsed_simply(self) -> None:
        fields, body = parse_front_matter(
            '---\nname: "pdf"\ndescription: Fill PDF forms: fast\n  nested: no\n---\n\nBody'
        )
        assert fields == {"name": "pdf", "description": "Fill PDF forms: fast"}
        assert body == "Body"
        assert parse_front_matter("no front matter") == ({}, "no front matter")

    def test_unclosed_front_matter_raises(self) -> None:
        with pytest.raises(SourceError) as info:
            parse_front_matter("---\nname: x\n")
        assert info.value.field == "front_matter"

    def test_names_and_descriptions_are_items_bodies_load_on_demand(self, tmp_path: Path) -> None:
        pdf = write_skill(tmp_path, "pdf", "---\nname: pdf\ndescription: Fill PDF forms\n---\nStep 1: open it.\n")
        write_skill(tmp_path, "deep/xlsx", "---\nname: xlsx\ndescription: 'Edit spreadsheets'\n---\nUse openpyxl.")
        library = SkillLibrary([tmp_path])
        assert library.names() == ["pdf", "xlsx"]
        items = library.items()
        assert [(i.id, i.content, i.type, i.source) for i in items] == [
            ("skill:pdf", "pdf: Fill PDF forms", "skill", "skills"),
            ("skill:xlsx", "xlsx: Edit spreadsheets", "skill", "skills"),
        ]
        assert all("Step 1" not in i.content for i in items)
        pdf.write_text("---\nname: pdf\ndescription: Fill PDF forms\n---\nStep 1 (edited).\n")
        assert library.load("pdf") == "Step 1 (edited).\n"  # read from disk when asked
        body = library.load_item("pdf")
        assert (body.id, body.type, body.content) == ("skill-body:pdf", "skill_body", "Step 1 (edited).\n")

    @pytest.mark.parametrize(
        ("text", "field"),
        [("---\ndescription: d\n---\n", "name"), ("---\nname: n\n---\n", "description"), ("no front matter", "name")],
    )
    def test_a_skill_without_name_or_description_is_rejected(self, tmp_path: Path, text: str, field: str) -> None:
        path = write_skill(tmp_path, "bad", text)
        with pytest.raises(SourceError) as info:
            SkillLibrary([tmp_path])
        assert info.value.field == field
        assert str(path) in str(info.value)

    def test_duplicate_skill_names_are_rejected_naming_both_paths(self, tmp_path: Path) -> None:
        a = write_skill(tmp_path, "a", "---\nname: same\ndescription: one\n---\n")
        b = write_skill(tmp_path, "b", "---\nname: same\ndescription: two\n---\n")
        with pytest.raises(SourceError) as info:
            SkillLibrary([tmp_path])
        assert str(a) in str(info.value)
        assert str(b) in str(info.value)

    def test_unknown_skill_and_missing_root(self, tmp_path: Path) -> None:
        write_skill(tmp_path, "pdf", "---\nname: pdf\ndescription: d\n---\n")
        library = SkillLibrary([tmp_path], trust="external")
        assert library.items()[0].trust == "external"
        with pytest.raises(SourceError) as info:
            library.load("pfd")
        assert str(info.value) == "skill 'pfd' is not in the library (1 skills: pdf)"
        with pytest.raises(SourceError) as missing:
            SkillLibrary([tmp_path / "nope"])
        assert missing.value.field == "roots"


class TestEvidence:
    counter = TiktokenCounter()

    def test_long_output_is_archived_whole_and_enters_as_a_bounded_excerpt(self) -> None:
        archive = Archive()
        log = "\n".join(f"line {n}: ok" for n in range(2000))
        item = evidence_item(log, key="grep-1", source="grep", archive=archive, counter=self.counter, max_tokens=80)
        handle = item.metadata["handle"]
        assert archive.read(handle) == log
        assert self.counter.count_text(item.content) <= 80
        assert item.content.startswith("line 0: ok")
        assert item.content.endswith("line 1999: ok")
        assert handle in item.content
        assert item.metadata["truncated"] is True
        assert item.metadata["chars"] == len(log)
        assert (item.trust, item.type, item.source, item.id) == ("tool", "tool_output", "grep", "grep-1")

    def test_short_output_is_carried_whole_and_still_archived(self) -> None:
        archive = Archive()
        item = evidence_item("3 matches", key="k", source="grep", archive=archive, counter=self.counter, max_tokens=50)
        assert item.content == "3 matches"
        assert item.metadata["truncated"] is False
        assert archive.read("ctx://archive/k") == "3 matches"

    def test_errors_are_typed(self) -> None:
        archive = Archive()
        with pytest.raises(InvalidPolicyError):
            evidence_item("x", key="k", source="s", archive=archive, counter=self.counter, max_tokens=0)
        evidence_item("one", key="k2", source="s", archive=archive, counter=self.counter, max_tokens=5)
        with pytest.raises(ArchiveError):
            evidence_item("two", key="k2", source="s", archive=archive, counter=self.counter, max_tokens=5)
