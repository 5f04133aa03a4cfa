"""The output a bank-statement parser aims for when a target has no ``result.csv``.

Without an expected CSV nothing says which columns the frame should have, so a setting
(``SBX_OUTPUT__*``) or the target's ``target.toml`` (an ``[output]`` table, which wins) names
them. The default is decided here (docs/parser_layouts.md): ``Date`` as ISO text
(``%Y-%m-%d``), ``Description``, ``Debit`` and ``Credit`` as positive numbers (one of them
empty per row), and ``Balance``. ``amounts = "signed"`` gives one ``Amount`` column instead
(credits positive). Opening, closing and carried-forward balance rows are not rows.

    [output]
    amounts = "signed"          # or "split" (the default)
    date_format = "%d/%m/%Y"
    date = "Txn Date"           # column names, each optional
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Role = Literal["date", "description", "debit", "credit", "amount", "balance"]


class OutputSchema(BaseModel):
    """Column names, date format and amount form of a parser's frame without a CSV."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    date: str = Field("Date", min_length=1, description="Name of the transaction date column.")
    description: str = Field("Description", min_length=1, description="Name of the narration column.")
    debit: str = Field("Debit", min_length=1, description="Name of the debit column (split amounts).")
    credit: str = Field("Credit", min_length=1, description="Name of the credit column (split amounts).")
    amount: str = Field("Amount", min_length=1, description="Name of the signed amount column.")
    balance: str = Field("Balance", min_length=1, description="Name of the running balance column.")
    amounts: Literal["split", "signed"] = Field(
        "split", description="Two columns (debit, credit) or one signed amount (credits positive)."
    )
    date_format: str = Field("%Y-%m-%d", description="strftime format of the date column.")

    @field_validator("date_format")
    @classmethod
    def _has_directives(cls, value: str) -> str:
        if not all(d in value for d in ("%d", "%m")) and "%-d" not in value and "%b" not in value:
            raise ValueError("date_format must write a day and a month, e.g. %Y-%m-%d or %d/%m/%Y")
        return value

    def columns(self) -> list[tuple[str, Role]]:
        """The frame's columns in order, each with its role."""
        amounts: list[tuple[str, Role]] = (
            [(self.debit, "debit"), (self.credit, "credit")]
            if self.amounts == "split"
            else [(self.amount, "amount")]
        )
        return [(self.date, "date"), (self.description, "description"), *amounts,
                (self.balance, "balance")]
