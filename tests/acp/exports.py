"""Every name libleanmpi (and so -lacp) exports is public: MPI_*, PMPI_*
(the MPI standard's) or acp_* (include/acp.h); nothing internal-looking.
AddressSanitizer's own companions of exported data (__odr_asan.NAME, its
one-definition-rule indicators) are instrumentation, not the library's."""
import re
import subprocess
import sys

out = subprocess.run(["nm", "-D", "--defined-only", sys.argv[1]], capture_output=True, text=True, check=True).stdout
names = [line.split()[-1] for line in out.splitlines() if line.strip()]
public = re.compile(r"^(MPI_|PMPI_|acp_)")
asan_odr = re.compile(r"^__odr_asan\.(MPI_|PMPI_|acp_)")
other = sorted(n for n in names if not public.match(n) and not asan_odr.match(n))
acp = sorted(n for n in names if n.startswith("acp_"))
print(f"{len(names)} exported names, {len(acp)} of them acp_*")
if other or len(acp) != 30:
    print("FAIL exported besides the public names: " + ", ".join(other) if other else
          f"FAIL {len(acp)} acp_* names exported, expected the 30 of include/acp.h")
    sys.exit(1)
print("PASS the library exports public names only")
