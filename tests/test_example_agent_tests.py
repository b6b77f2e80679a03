"""The example of testing your own agent (examples/test_my_agent.py) runs with the project's tests."""

from examples.test_my_agent import *  # noqa: F403  (its tests and fixtures, collected here)
