"""The example of docs/ACP.md builds with acpcc and runs under acprun as
the page says: rank 0's counter ends at the number of processes."""
import re
import subprocess
import sys
import tempfile
from pathlib import Path

repo, build = Path(sys.argv[1]), Path(sys.argv[2])
text = (repo / "docs" / "ACP.md").read_text()
code = re.search(r"## Example\n\n```c\n(.*?)```", text, re.S).group(1)
with tempfile.TemporaryDirectory() as d:
    src, exe = Path(d) / "example.c", Path(d) / "example"
    src.write_text(code)
    subprocess.run([build / "bin" / "acpcc", "-Wall", "-Werror", "-O2", "-o", exe, src], check=True)
    out = subprocess.run([build / "bin" / "acprun", "-np", "3", exe], capture_output=True, text=True, timeout=60)
print(out.stdout + out.stderr)
ok = out.returncode == 0 and "rank 0: right neighbour has 101, counter 3" in out.stdout
print("PASS docs/ACP.md example" if ok else "FAIL docs/ACP.md example")
sys.exit(0 if ok else 1)
