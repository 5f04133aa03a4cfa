"""The offline generator: the module's five layers, its declarations and its three styles.

There is no idris2 here to type-check the output; these tests pin its shape: what is
declared, that everything is public export, that every record's constructor is applied
to as many arguments as it has fields, and what each style does or does not use.
"""

from __future__ import annotations

import re

import pytest

from agents.idris.analysis import analyze_document
from agents.idris.generator import STYLE_ORDER, generate_module
from controller.platform.settings import PROJECT_ROOT
from tests.fakes import load_document_here

CONTRACT = PROJECT_ROOT / "data" / "service-contract" / "service_contract.pdf"
DOCUMENTS = PROJECT_ROOT / "tests" / "fixtures" / "idris_documents"
RECORD = re.compile(r"^record (?P<name>\w+)[^\n]* where\n  constructor (?P<con>\w+)\n(?P<body>(?:  .*\n)+)", re.M)
SIGNATURE = re.compile(r"^(?P<name>[a-z]\w*'?) : ", re.M)


@pytest.fixture(scope="module")
def contract():  # noqa: ANN201
    return analyze_document(load_document_here(CONTRACT), "contract")


@pytest.fixture(scope="module")
def modules(contract):  # noqa: ANN001, ANN201
    return {style: generate_module(contract, "ServiceContract", style) for style in STYLE_ORDER}


def records(source: str) -> dict[str, tuple[str, list[str]]]:
    """Record name -> (constructor, field lines)."""
    return {m["name"]: (m["con"], [line.strip() for line in m["body"].splitlines()]) for m in RECORD.finditer(source)}


def field_name(line: str) -> str:
    return line.removeprefix("0 ").split(" : ")[0]


class TestEveryStyle:
    @pytest.mark.parametrize("style", STYLE_ORDER)
    def test_module_header_imports_and_totality(self, modules, style):
        """`module Domains.ServiceContract`, Data.So, %default total, before any declaration."""
        source = modules[style]
        code = [line for line in source.splitlines() if line and not line.startswith("|||")]
        assert code[0] == "module Domains.ServiceContract"
        assert "import Data.So" in code[1:4] and "%default total" in code

    @pytest.mark.parametrize("style", STYLE_ORDER)
    def test_the_five_layers_in_order(self, modules, style):
        """Primitive types, validated types, entities, aggregate, instances."""
        positions = [modules[style].index(f"-- Layer {n}:") for n in range(1, 6)]
        assert positions == sorted(positions)

    @pytest.mark.parametrize("style", STYLE_ORDER)
    def test_every_declaration_is_public_export(self, modules, style):
        """Each top-level signature, record, data type and implementation is `public export`."""
        lines = modules[style].splitlines()
        starts = [i for i, line in enumerate(lines)
                  if SIGNATURE.match(line) or re.match(r"^(record|data) |^Show \w+ where", line)]
        assert starts
        for index in starts:
            previous = next(lines[j] for j in range(index - 1, -1, -1) if not lines[j].startswith("|||"))
            assert previous == "public export", lines[index]

    @pytest.mark.parametrize("style", STYLE_ORDER)
    def test_the_expected_declarations(self, modules, style):
        """Money, Date, Period, Amounts, LineItem, Role, Party, the aggregate, smart constructors."""
        source = modules[style]
        assert set(records(source)) == {"Money", "Date", "Period", "Amounts", "LineItem", "Party", "ServiceContract"}
        assert "data Role = Client | Contractor" in source
        for signature in ("mkMoney : Integer -> Maybe Money", "mkDate : Integer -> Integer -> Integer -> Maybe Date",
                          "mkPeriod : Date -> Date -> Maybe Period", "itemsTotal : List LineItem -> Integer",
                          "mkAmounts : Money -> Money -> Money -> Money -> Money -> Maybe Amounts",
                          "mkLineItem : String -> Integer -> Money -> Money -> Maybe LineItem",
                          "decideSo : (b : Bool) -> Maybe (So b)"):
            assert signature in source

    @pytest.mark.parametrize("style", STYLE_ORDER)
    def test_invariants_are_proof_fields(self, modules, style):
        """Each invariant of the analysis is a proof field of the record it constrains."""
        found = records(modules[style])
        amounts = " ".join(found["Amounts"][1])
        assert "amount totalAmount" in amounts and "amount supplyAmount + amount vat" in amounts
        assert re.search(r"amount vat \* (10|\(the Integer 10\)) == amount supplyAmount\)", amounts)
        assert any("dateKey startDate <= dateKey endDate" in f for f in found["Period"][1])
        aggregate = " ".join(found["ServiceContract"][1])
        assert "itemsTotal items == amount (supplyAmount amounts)" in aggregate
        assert "dateKey signedOn <= dateKey (startDate contractPeriod)" in aggregate

    @pytest.mark.parametrize("style", STYLE_ORDER)
    def test_field_names_are_unique_in_the_module(self, modules, style):
        """Record fields share the module's namespace: none is declared twice."""
        names = [field_name(line) for _, fields in records(modules[style]).values() for line in fields]
        assert len(names) == len(set(names))

    @pytest.mark.parametrize("style", STYLE_ORDER)
    def test_brackets_balance(self, modules, style):
        """Parentheses and brackets balance in every declaration."""
        for block in modules[style].split("\n\n"):
            code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', re.sub(r"--.*", "", block))
            assert code.count("(") == code.count(")") and code.count("[") == code.count("]"), block

    def test_the_documents_data_is_in_layer_5(self, modules):
        """Names, numbers and dates of the contract appear as values."""
        layer5 = modules["dependent"].split("-- Layer 5:")[1]
        for value in ('"주식회사 한빛데이터"', '"214-86-12345"', "48000000", "52800000", "MkDate 2025 3 1 Oh",
                      '"SC-2025-0142"', '"교육 및 기술지원"'):
            assert value in layer5


class TestDependentStyle:
    def test_erased_proofs_indexed_parties_and_refl(self, modules):
        """Quantity-0 proofs, `Party : Role -> Type`, sums as equalities proved by Refl."""
        source = modules["dependent"]
        assert "  0 nonNegative : So (amount >= 0)" in source and "record Party (r : Role) where" in source
        assert "client : Party Client" in source and "import Decidable.Equality" in source
        assert "amount totalAmount = amount supplyAmount + amount vat" in source

    def test_constructors_get_one_argument_per_field(self, modules):
        """docAmounts and the aggregate apply their constructor to every field and proof."""
        source = modules["dependent"]
        con, fields = records(source)["Amounts"]
        application = re.search(rf"^docAmounts = {con} (.*)$", source, re.M)
        assert application is not None
        arguments = re.findall(r"\(MkMoney \d+ Oh\)|Refl|Oh", application.group(1))
        assert len(arguments) == len(fields)
        _, aggregate_fields = records(source)["ServiceContract"]
        body = source.split("serviceContract = MkServiceContract\n")[1]
        assert len([line for line in body.splitlines() if line.startswith("  ")]) == len(aggregate_fields)


class TestFallbackStyles:
    def test_conservative_has_no_quantities_and_no_equality(self, modules):
        """Plain proof fields, `So` only, literals annotated, parties not indexed."""
        source = modules["conservative"]
        assert not re.search(r"^  0 ", source, re.M) and "Decidable.Equality" not in source
        assert "Refl" not in source and "(the Integer 10)" in source and "record Party where" in source

    def test_runtime_has_no_proof_terms_and_maybe_values(self, modules):
        """No `Oh`/`Refl` for the type checker to normalise; the document is a `Maybe`."""
        source = modules["runtime"]
        layer5 = source.split("-- Layer 5:")[1]
        assert not re.search(r"\bOh\b|\bRefl\b", layer5)
        assert "serviceContract : Maybe ServiceContract" in source and "docItems = sequence" in source
        assert "mkServiceContract" in layer5

    def test_a_document_that_breaks_a_rule_is_built_at_run_time(self, tmp_path):
        """No proof of a false rule can exist: Layer 5 is built by the smart constructors."""
        path = tmp_path / "doc.txt"
        path.write_text("계약서\n공급가액: 1,000,000원\n부가가치세(10%): 90,000원\n", encoding="utf-8")
        source = generate_module(analyze_document(load_document_here(path), "contract"), "Broken", "dependent")
        assert "(style: runtime)" in source and "broken : Maybe Broken" in source


class TestOtherDocuments:
    def test_invoice_module(self):
        """The invoice becomes Domains.Invoice with Supplier/Recipient parties and dates in order."""
        analysis = analyze_document(load_document_here(DOCUMENTS / "invoice.txt"), "invoice")
        source = generate_module(analysis, "Invoice")
        assert "module Domains.Invoice" in source and "data Role = Supplier | Recipient" in source
        assert "dateKey issuedOn <= dateKey dueOn" in source and "invoice : Invoice" in source

    def test_strings_are_escaped(self, tmp_path):
        """Quotes and backslashes in the document cannot break out of a string literal."""
        path = tmp_path / "doc.txt"
        path.write_text('계약서\n용역명: A "quoted" \\ name\n', encoding="utf-8")
        source = generate_module(analyze_document(load_document_here(path), "contract"), "Quoted")
        assert r'"A \"quoted\" \\ name"' in source

    def test_a_document_with_nothing_labelled_still_has_an_aggregate(self, tmp_path):
        """Only a title: the aggregate carries it."""
        path = tmp_path / "doc.txt"
        path.write_text("메모\n아무 내용 없음\n", encoding="utf-8")
        source = generate_module(analyze_document(load_document_here(path), "other"), "Memo")
        assert "documentTitle : String" in source and 'memo = MkMemo\n  "메모"' in source
