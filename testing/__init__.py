"""What the tests share: real repositories, real CLI runs, real pushes, and the
projects they judge (pre-commit's ``testing/`` layout)."""
