"""A property message never contradicts itself: a row of attention weights
whose valid length is 0 must be all zeros (sum 0), and when it sums to 1
instead the message says which sum each row owes, never that the row
"does not sum to 1" (in English and Chinese)."""

import numpy as np
import pytest

from graders.lib import properties
from m2t import i18n

HEADLINE = {
    "en": ("do not sum to 1", "sum to 1, and to 0"),
    "zh": ("行和不为 1", "和应为 1，有效长度为 0 的行和应为 0"),
}
"""(words that contradict a row summing to 1, words that state the rule)."""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_empty_row_summing_to_one_is_told_it_owes_zero(lang):
    lens = np.array([0, 3])  # the first sequence has no valid key
    weights = np.full((2, 2, 4), 0.25)  # uniform: every row sums to 1
    weights[1, :, 3] = 0.0
    weights[1, :, :3] = 1 / 3
    with i18n.using(lang):
        message = properties.rows_sum_to_one(lens)(weights)
    assert message is not None
    wrong, rule = HEADLINE[lang]
    assert wrong not in message, message
    assert rule in message, message
    assert "1" in message and "0" in message  # the row's sum, the one owed
