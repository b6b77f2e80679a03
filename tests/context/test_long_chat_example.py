"""examples/long_chat.py runs offline and compacts where its docstring says."""

import pytest

from examples import long_chat


def test_long_chat(capsys: pytest.CaptureFixture[str]) -> None:
    assert long_chat.main() == [
        "Answer 1.",
        "Answer 2.",
        "(compacted: 'Topic 1 was covered.', 2 messages folded)",
        "Answer 3.",
        "(compacted: 'Topics 1 and 2 were covered.', 3 messages folded)",
        "Answer 4.",
        "(compacted: 'Topics 1 to 3 were covered.', 3 messages folded)",
        "Answer 5.",
    ]
    assert capsys.readouterr().out.splitlines()[-1] == (
        "the model last received: ['Summary of the earlier c', 'Question 4: tell me abou', 'Answer 4.',"
        " 'Question 5: tell me abou']"
    )
