"""The levels inside a host, from hwloc: which slots share a core, a cache
or a NUMA node, for leanmpi-map's network topology graph.

A host's topology is hwloc's XML (`lstopo-no-graphics --of xml FILE` on
that host), or this machine's when asked for `local`. Slot s of the host
is its s-th processing unit among the usable ones, in hwloc's logical
order: the numbering LeanMPI's rankfile slots use (the s-th CPU the
launcher may use), Open MPI's logical one.
"""
import shutil
import subprocess
import xml.etree.ElementTree as ET

CACHES = ("L1Cache", "L2Cache", "L3Cache", "L4Cache", "L5Cache")
# from the closest to the farthest; a pair of slots of one host is at the
# first level they share, else at "node"
LEVELS = ("core", "cache", "numa", "node")


class TopologyError(Exception):
    pass


def _cpuset_bits(text):
    """hwloc's cpuset "0x00000003" or "0xf...f,0x00000001" (32-bit words, most significant first)"""
    if not text:
        return None
    value = 0
    for word in text.split(","):
        value = (value << 32) | int(word, 16)
    return value


class PU:
    def __init__(self, os_index, core, caches, numa):
        self.os_index, self.core, self.caches, self.numa = os_index, core, caches, numa


def _walk(obj, core, caches, numa, allowed, out):
    kind = obj.get("type")
    # a NUMA node hangs below the object whose processing units are near it
    for child in obj.findall("object"):
        if child.get("type") == "NUMANode":
            numa = child.get("os_index")
    if kind == "Core":
        core = obj.get("gp_index")
    elif kind in CACHES:
        caches = caches + (obj.get("gp_index"),)
    elif kind == "PU":
        index = int(obj.get("os_index"))
        if allowed is None or allowed >> index & 1:
            out.append(PU(index, core if core is not None else obj.get("gp_index"), frozenset(caches), numa))
    for child in obj.findall("object"):
        if child.get("type") != "NUMANode":
            _walk(child, core, caches, numa, allowed, out)


def parse(text, where):
    """The usable processing units of an lstopo XML, in logical order."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise TopologyError(f"{where}: not hwloc XML ({e})")
    machine = root.find("object")
    if root.tag != "topology" or machine is None:
        raise TopologyError(f"{where}: not hwloc XML (no <topology> with a machine object)")
    allowed = _cpuset_bits(machine.get("allowed_cpuset"))
    pus = []
    _walk(machine, None, (), None, allowed, pus)
    if not pus:
        raise TopologyError(f"{where}: no processing unit in the topology")
    return pus


def load(spec, where):
    """spec: a path to lstopo's XML, or "local" for this machine's."""
    if spec == "local":
        lstopo = shutil.which("lstopo-no-graphics") or shutil.which("lstopo")
        if not lstopo:
            raise TopologyError(f"{where}: topology=local needs hwloc's lstopo (Debian: hwloc-nox)")
        p = subprocess.run([lstopo, "--of", "xml", "-"], capture_output=True, text=True)
        if p.returncode != 0:
            raise TopologyError(f"{where}: lstopo failed: {p.stderr.strip()}")
        return parse(p.stdout, "lstopo")
    try:
        with open(spec) as f:
            return parse(f.read(), spec)
    except OSError as e:
        raise TopologyError(f"{where}: cannot read the topology {spec}: {e.strerror}")


def level(a, b):
    """The closest level two processing units of one host share."""
    if a.core == b.core:
        return "core"
    if a.caches & b.caches:
        return "cache"
    if a.numa is not None and a.numa == b.numa:
        return "numa"
    return "node"
