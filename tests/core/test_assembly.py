"""Strict assembly and the plan audit: validate, keep order, never truncate, never let immutable fragments change."""

from __future__ import annotations

import math

import pytest
from ctxbudget.context.assembly import BuiltContext, assemble_context_plan, assemble_fragments
from ctxbudget.context.fragments import Fragment
from ctxbudget.errors import (
    BudgetExceededError,
    DuplicateFragmentError,
    FragmentLimitError,
    InvalidFragmentError,
    InvalidPolicyError,
    PlanAuditError,
)
from ctxbudget.messages.tokens import CharCounter, TiktokenCounter


def frag(id: str, value: str = "text", **overrides: object) -> Fragment:
    fields: dict[str, object] = {"id": id, "source_id": "src", "trust": "user", "value": value}
    fields.update(overrides)
    return Fragment(**fields)


SYSTEM = frag("system", "You are terse.", trust="system", role="system", source_id="app")
QUESTION = frag("question", "How is the service doing?", lifetime="turn")
DOC = frag("doc", "Service is up since 09:00.", trust="retrieved", source_id="status-page")


class TestAssembleFragments:
    def test_renders_one_message_per_fragment_in_registered_order(self) -> None:
        built = assemble_fragments([SYSTEM, DOC, QUESTION], 2000)
        assert [m.metadata["fragment_id"] for m in built.messages] == ["system", "doc", "question"]
        assert [m.role for m in built.messages] == ["system", "user", "user"]
        assert built.messages[0].text == "You are terse."

    def test_usage_and_totals_are_measured_on_the_rendered_messages(self) -> None:
        counter = TiktokenCounter()
        built = assemble_fragments([SYSTEM, DOC], counter=counter)
        assert [(u.id, u.source_id, u.included) for u in built.fragment_usage] == [
            ("system", "app", True),
            ("doc", "status-page", True),
        ]
        assert [u.chars for u in built.fragment_usage] == [len(m.text) for m in built.messages]
        assert [u.tokens for u in built.fragment_usage] == [counter.count_message(m) for m in built.messages]
        assert built.total_chars == sum(len(m.text) for m in built.messages)
        assert built.total_tokens == sum(counter.count_message(m) for m in built.messages)
        assert built.fragment_usage[1].chars > len(DOC.value)  # the envelope is paid for

    def test_accepts_mappings_like_the_bare_configuration_example(self) -> None:
        raw = {
            "id": "question",
            "source_id": "request",
            "trust": "user",
            "lifetime": "turn",
            "max_chars": 1000,
            "role": "user",
            "value": "现在服务状态怎样?",
        }
        built = assemble_fragments([raw], 2000)
        assert isinstance(built, BuiltContext)
        assert built.total_chars == len("现在服务状态怎样?")

    def test_a_budget_exactly_met_passes(self) -> None:
        built = assemble_fragments([QUESTION])
        assert assemble_fragments([QUESTION], built.total_chars, max_tokens=built.total_tokens) == built

    def test_duplicate_ids_raise_naming_the_id_and_positions(self) -> None:
        with pytest.raises(DuplicateFragmentError) as info:
            assemble_fragments([QUESTION, DOC, frag("question", "again")])
        assert info.value.field == "id"
        assert "'question' appears 2 times (positions [0, 2])" in str(info.value)
        assert isinstance(info.value, InvalidFragmentError)

    @pytest.mark.parametrize(
        ("raw", "field"),
        [
            ({"id": "", "source_id": "s", "trust": "user", "value": "v"}, "id"),
            ({"id": "x", "source_id": "s", "trust": "user", "value": "v", "role": "tool"}, "role"),
            ({"id": "x", "source_id": "s", "trust": "tool", "value": "v", "role": "system"}, "role"),
        ],
    )
    def test_malformed_mappings_raise_invalid_fragment_error(self, raw: dict[str, object], field: str) -> None:
        with pytest.raises(InvalidFragmentError) as info:
            assemble_fragments([raw])
        assert info.value.field == field

    def test_fragments_are_revalidated_so_a_copied_data_fragment_cannot_become_system(self) -> None:
        forged = DOC.model_copy(update={"role": "system"})  # model_copy skips validation
        with pytest.raises(InvalidFragmentError) as info:
            assemble_fragments([forged])
        assert info.value.field == "role"
        assert "fragment 'doc'" in str(info.value)

    def test_a_fragment_over_its_own_max_chars_raises_with_both_numbers(self) -> None:
        with pytest.raises(FragmentLimitError) as info:
            assemble_fragments([frag("x", "a" * 7210, max_chars=6144)])
        assert info.value.field == "max_chars"
        assert str(info.value) == "fragment 'x' has 7,210 chars, its max_chars is 6,144"

    def test_a_fragment_over_its_own_max_tokens_raises_with_both_numbers(self) -> None:
        value = "hello world " * 50
        tokens = TiktokenCounter().count_text(value)
        with pytest.raises(FragmentLimitError) as info:
            assemble_fragments([frag("x", value, max_tokens=tokens - 1)])
        assert info.value.field == "max_tokens"
        assert f"fragment 'x' has {tokens:,} tokens" in str(info.value)
        assert f"its max_tokens is {tokens - 1:,}" in str(info.value)
        assert assemble_fragments([frag("x", value, max_tokens=tokens)]).fragment_usage[0].included

    def test_a_total_over_max_chars_raises_and_names_the_largest(self) -> None:
        fragments = [frag("a", "a" * 600), frag("b", "b" * 500)]
        with pytest.raises(BudgetExceededError) as info:
            assemble_fragments(fragments, 1000)
        assert info.value.field == "max_chars"
        message = str(info.value)
        assert "2 fragments total 1,100 chars, max_chars is 1,000 (over by 100" in message
        assert "'a' 600" in message

    def test_a_total_over_max_tokens_raises(self) -> None:
        counter = CharCounter(1.0)
        fragments = [frag("a", "a" * 10), frag("b", "b" * 10)]  # 3 + 10 each with CharCounter(1)
        with pytest.raises(BudgetExceededError) as info:
            assemble_fragments(fragments, max_tokens=25, counter=counter)
        assert info.value.field == "max_tokens"
        assert "2 fragments total 26 tokens, max_tokens is 25 (over by 1" in str(info.value)

    def test_nothing_is_ever_truncated(self) -> None:
        long = frag("long", "z" * 5000)
        with pytest.raises(BudgetExceededError):
            assemble_fragments([long], 4999)
        assert assemble_fragments([long], 5000).messages[0].text == "z" * 5000

    @pytest.mark.parametrize("bad", [-1, math.nan, math.inf, 1.5, True, "100"])
    @pytest.mark.parametrize("field", ["max_chars", "max_tokens"])
    def test_invalid_budgets_raise_invalid_policy_error(self, bad: object, field: str) -> None:
        with pytest.raises(InvalidPolicyError) as info:
            assemble_fragments([QUESTION], **{field: bad})  # type: ignore[arg-type]
        assert info.value.field == field
        assert repr(bad) in str(info.value)


class TestAssembleContextPlan:
    originals = (SYSTEM, DOC, QUESTION)

    def plan(
        self,
        fragments: list[Fragment],
        mutable: list[str],
        max_input_chars: int | None = None,
        max_input_tokens: int | None = None,
    ) -> BuiltContext:
        return assemble_context_plan(
            fragments=fragments,
            original_fragments=list(self.originals),
            mutable_fragment_ids=mutable,
            max_input_chars=max_input_chars,
            max_input_tokens=max_input_tokens,
        )

    def test_an_unchanged_plan_with_no_mutable_ids_assembles(self) -> None:
        built = self.plan(list(self.originals), [], max_input_chars=2000)
        assert built == assemble_fragments(self.originals)

    def test_empty_mutable_list_means_nothing_may_be_dropped(self) -> None:
        with pytest.raises(PlanAuditError) as info:
            self.plan([SYSTEM, QUESTION], [])
        assert info.value.field == "fragments"
        assert str(info.value) == "fragment 'doc' was dropped, but it is not mutable (mutable: none)"

    def test_empty_mutable_list_means_nothing_may_change(self) -> None:
        shortened = frag("doc", "Up.", trust="retrieved", source_id="status-page")
        with pytest.raises(PlanAuditError) as info:
            self.plan([SYSTEM, shortened, QUESTION], [])
        assert "fragment 'doc' changed value (26 -> 3 chars), but it is not mutable" in str(info.value)

    @pytest.mark.parametrize(
        ("change", "expected"),
        [
            ({"lifetime": "session"}, "lifetime ('turn' -> 'session')"),
            ({"max_chars": 10}, "max_chars (None -> 10)"),
            ({"relevance": 0.9}, "relevance (0.5 -> 0.9)"),
            ({"metadata": {"x": 1}}, "metadata ({} -> {'x': 1})"),
            ({"required": True}, "required (False -> True)"),
        ],
    )
    def test_any_field_change_of_an_immutable_fragment_is_named(self, change: dict[str, object], expected: str) -> None:
        changed = QUESTION.model_copy(update=change)
        with pytest.raises(PlanAuditError) as info:
            self.plan([SYSTEM, DOC, changed], ["doc"])
        assert f"fragment 'question' changed {expected}, but it is not mutable (mutable: ['doc'])" == str(info.value)

    def test_mutable_fragments_may_be_dropped_and_usage_reports_them(self) -> None:
        built = self.plan([SYSTEM, QUESTION], ["doc"])
        assert [m.metadata["fragment_id"] for m in built.messages] == ["system", "question"]
        assert [(u.id, u.included, u.chars, u.tokens) for u in built.fragment_usage][1] == ("doc", False, 0, 0)
        assert [u.id for u in built.fragment_usage] == ["system", "doc", "question"]
        assert built.total_chars == sum(len(m.text) for m in built.messages)

    def test_mutable_fragments_may_be_shortened(self) -> None:
        shortened = DOC.model_copy(update={"value": "Up.", "max_chars": 10})
        built = self.plan([SYSTEM, shortened, QUESTION], ["doc"])
        assert "Up." in built.messages[1].text

    @pytest.mark.parametrize("field", ["source_id", "trust", "role"])
    def test_even_mutable_fragments_keep_their_provenance(self, field: str) -> None:
        new_value = {"source_id": "elsewhere", "trust": "external", "role": "assistant"}[field]
        changed = DOC.model_copy(update={field: new_value})
        with pytest.raises(PlanAuditError) as info:
            self.plan([SYSTEM, changed, QUESTION], ["doc"])
        assert f"fragment 'doc' changed {field}" in str(info.value)
        assert "provenance" in str(info.value)

    @pytest.mark.parametrize(
        ("update", "named"),
        [
            ({"required": True}, "required"),
            ({"lifetime": "persistent"}, "lifetime"),
        ],
    )
    def test_even_mutable_fragments_keep_their_requirement_and_lifetime(self, update: dict, named: str) -> None:  # type: ignore[type-arg]
        with pytest.raises(PlanAuditError, match=f"changed {named}"):
            self.plan([SYSTEM, DOC.model_copy(update=update), QUESTION], ["doc"])

    def test_a_required_mutable_fragment_may_be_shortened_but_never_dropped(self) -> None:
        required = DOC.model_copy(update={"required": True})
        originals = [SYSTEM, required, QUESTION]
        shortened = required.model_copy(update={"value": "Up."})
        built = assemble_context_plan(
            fragments=[SYSTEM, shortened, QUESTION], original_fragments=originals, mutable_fragment_ids=["doc"]
        )
        assert "Up." in built.messages[1].text
        for candidate in ([SYSTEM, QUESTION], [SYSTEM, required.model_copy(update={"value": " "}), QUESTION]):
            with pytest.raises(PlanAuditError) as info:
                assemble_context_plan(fragments=candidate, original_fragments=originals, mutable_fragment_ids=["doc"])
            assert info.value.field == "fragments"
            assert str(info.value).startswith("fragment 'doc' is required and was ")
            assert "a plan may shorten or replace a required fragment, never drop it" in str(info.value)
        blank = required.model_copy(update={"value": ""})
        unchanged = assemble_context_plan(fragments=[blank], original_fragments=[blank], mutable_fragment_ids=["doc"])
        assert [u.included for u in unchanged.fragment_usage] == [True]

    def test_a_plan_may_tighten_a_limit_but_never_loosen_or_remove_it(self) -> None:
        limited = DOC.model_copy(update={"max_chars": 100})
        originals = [SYSTEM, limited, QUESTION]
        tighter = limited.model_copy(update={"value": "Up.", "max_chars": 10})
        assert_plan = assemble_context_plan(
            fragments=[SYSTEM, tighter, QUESTION], original_fragments=originals, mutable_fragment_ids=["doc"]
        )
        assert "Up." in assert_plan.messages[1].text
        for loosened in ({"max_chars": None}, {"max_chars": 1_000}):
            candidate = limited.model_copy(update={**loosened, "value": "x" * 500})
            with pytest.raises(PlanAuditError, match="loosen a limit"):
                assemble_context_plan(
                    fragments=[SYSTEM, candidate, QUESTION], original_fragments=originals, mutable_fragment_ids=["doc"]
                )

    def test_new_fragments_are_rejected(self) -> None:
        with pytest.raises(PlanAuditError) as info:
            self.plan([SYSTEM, DOC, QUESTION, frag("extra")], ["doc"])
        assert "fragment 'extra' is not among the 3 original fragments" in str(info.value)

    def test_reordering_is_rejected(self) -> None:
        with pytest.raises(PlanAuditError) as info:
            self.plan([QUESTION, SYSTEM, DOC], ["doc", "question", "system"])
        assert "reorders" in str(info.value)
        assert "['system', 'doc', 'question']" in str(info.value)

    def test_unknown_mutable_ids_are_rejected(self) -> None:
        with pytest.raises(PlanAuditError) as info:
            self.plan(list(self.originals), ["dco"])
        assert info.value.field == "mutable_fragment_ids"
        assert "['dco']" in str(info.value)

    def test_a_string_is_not_a_list_of_mutable_ids(self) -> None:
        with pytest.raises(InvalidPolicyError) as info:
            self.plan(list(self.originals), "doc")  # type: ignore[arg-type]
        assert info.value.field == "mutable_fragment_ids"

    def test_duplicates_in_the_candidate_or_the_originals_raise(self) -> None:
        with pytest.raises(DuplicateFragmentError):
            self.plan([SYSTEM, DOC, DOC, QUESTION], ["doc"])
        with pytest.raises(DuplicateFragmentError):
            assemble_context_plan(fragments=[SYSTEM], original_fragments=[SYSTEM, SYSTEM], mutable_fragment_ids=[])

    def test_the_audit_runs_before_the_budget(self) -> None:
        with pytest.raises(PlanAuditError):
            self.plan([SYSTEM, QUESTION], [], max_input_chars=1)

    def test_budgets_are_checked_with_their_own_names(self) -> None:
        with pytest.raises(BudgetExceededError) as info:
            self.plan(list(self.originals), [], max_input_chars=10)
        assert info.value.field == "max_input_chars"
        with pytest.raises(BudgetExceededError) as info:
            self.plan(list(self.originals), [], max_input_tokens=10)
        assert info.value.field == "max_input_tokens"
        with pytest.raises(InvalidPolicyError) as bad:
            self.plan(list(self.originals), [], max_input_chars=-3)
        assert bad.value.field == "max_input_chars"

    def test_a_mutable_fragment_still_obeys_its_own_limit(self) -> None:
        grown = DOC.model_copy(update={"value": "x" * 50, "max_chars": 20})
        with pytest.raises(FragmentLimitError) as info:
            self.plan([SYSTEM, grown, QUESTION], ["doc"])
        assert str(info.value) == "fragment 'doc' has 50 chars, its max_chars is 20"
