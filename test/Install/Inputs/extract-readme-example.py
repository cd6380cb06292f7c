"""Prints the C++ block of README.md that follows the `readme-example` marker.

test/Install/consumer.test compiles and runs what this prints, so the snippet
in the README is tested exactly as a reader copies it.
"""

import sys


def main(readme: str) -> int:
    lines = open(readme, encoding="utf-8").read().splitlines()
    marker = next((i for i, line in enumerate(lines) if "<!-- readme-example" in line), None)
    if marker is None or marker + 1 >= len(lines) or lines[marker + 1].strip() != "```cpp":
        sys.exit(f"{readme}: no ```cpp block right after the readme-example marker")
    try:
        end = lines.index("```", marker + 2)
    except ValueError:
        sys.exit(f"{readme}: the readme-example block is not closed")
    print("\n".join(lines[marker + 2:end]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
