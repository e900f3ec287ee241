"""One file, however a transcript names it: the absolute path an editor used, the relative one a search printed, the
bare name ``go test`` reported a failure in. Each is merged into the one known file it names, never guessed."""

from __future__ import annotations

import pytest
from ctxbudget.compaction._artifacts import canonical_paths

ABSOLUTE = "/users/soph/cli/cmd/entire/cli/trailers/trailers_test.go"
RELATIVE = "cmd/entire/cli/trailers/trailers_test.go"


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ([ABSOLUTE, RELATIVE], {RELATIVE: ABSOLUTE}),
        ([ABSOLUTE, "trailers_test.go"], {"trailers_test.go": ABSOLUTE}),
        (  # the bare name ends two keys that are one file: that file
            [ABSOLUTE, RELATIVE, "trailers_test.go"],
            {RELATIVE: ABSOLUTE, "trailers_test.go": ABSOLUTE},
        ),
        ([ABSOLUTE, "/users/soph/cli/other/trailers_test.go", "trailers_test.go"], {}),  # two files: neither
        ([ABSOLUTE, "Makefile"], {}),  # no file name the absolute path ends with
    ],
)
def test_a_path_is_merged_into_the_one_known_file_it_names(keys: list[str], expected: dict[str, str]) -> None:
    assert canonical_paths(keys) == expected
