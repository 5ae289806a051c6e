#!/bin/bash
# tools/vcluster end to end: a cluster of three hosts comes up with
# addresses, host names that resolve, a TCP connection from one host to
# another by name, bandwidth shaping and no route out; `up` again replaces
# it; bad input is refused; `down` (twice) leaves no namespace, no file in
# /etc/netns and no link in the machine's own namespace. Skipped, with the
# reason, where the machine cannot create namespaces.
#   vcluster_test.sh SOURCE_DIR
set -u
vc="$1/tools/vcluster"
name="ct$(($$ % 1000000))"
fails=0

fail() {
    echo "FAIL $*"
    fails=$((fails + 1))
}

out=$("$vc" check)
rc=$?
if [ $rc = 77 ]; then
    echo "$out"
    exit 77
fi
[ $rc = 0 ] || {
    echo "FAIL vcluster check: exit $rc: $out"
    exit 1
}

root_links() { ip -o link show | awk -F': ' '{print $2}' | sort; }
before=$(root_links)
trap '"$vc" down "$name" >/dev/null 2>&1' EXIT

hosts=$("$vc" up "$name" 3 --rate 50mbit --subnet 10.213.7) || fail "up $name 3"
[ "$(echo "$hosts" | wc -l)" = 3 ] || fail "up listed: $hosts"
for i in 0 1 2; do
    echo "$hosts" | grep -qx "$name-$i lmvc-$name-$i 10.213.7.$((i + 1))" || fail "host $i missing from: $hosts"
    got=$("$vc" exec "$name" "$name-$i" hostname) || fail "exec on $name-$i"
    [ "$got" = "$name-$i" ] || fail "host name of $name-$i: '$got'"
    [ -z "$(ip -n "lmvc-$name-$i" route show default)" ] || fail "$name-$i has a default route"
    "$vc" exec "$name" "$name-$i" tc qdisc show dev eth0 | grep -q "tbf.*rate 50Mbit" || fail "no 50 Mbit tbf on $name-$i"
done
echo "PASS up: three hosts with addresses, host names, shaping and no route out"

# ssh's form, for launchers that expect ssh: options before the host are
# skipped, the words are one command line for sh
got=$("$vc" ssh "$name" -x -o BatchMode=yes "$name-1" echo '$(hostname)' "'a  b'") || fail "ssh form"
[ "$got" = "$name-1 a  b" ] || fail "ssh form ran as: '$got'"
echo "PASS ssh: options skipped, words run by sh as the host"

# a TCP connection by host name, from host 0 to host 2, answered with the
# server's host name and the client's address (bounded by timeouts)
"$vc" exec "$name" "$name-2" python3 -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 7000))
s.listen(1)
s.settimeout(10)
c, a = s.accept()
c.sendall((socket.gethostname() + " " + a[0]).encode())
c.close()' &
server=$!
reply=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
    reply=$("$vc" exec "$name" "$name-0" python3 -c "
import socket, sys
try:
    c = socket.create_connection(('$name-2', 7000), timeout=2)
except OSError:
    sys.exit(1)
print(c.recv(100).decode())" 2>/dev/null) && break
    sleep 0.2
done
wait $server
[ "$reply" = "$name-2 10.213.7.1" ] && echo "PASS tcp: $name-0 reached $name-2 by name" || fail "tcp reply: '$reply'"

# up again: the old cluster is replaced, nothing of it remains
hosts=$("$vc" up "$name" 2 --subnet 10.213.7) || fail "second up"
[ "$(echo "$hosts" | wc -l)" = 2 ] || fail "second up listed: $hosts"
ip netns list | grep -q "^lmvc-$name-2\b" && fail "host 2 of the first cluster survived the second up"
[ ! -e "/etc/netns/lmvc-$name-2" ] || fail "/etc/netns/lmvc-$name-2 survived the second up"
echo "PASS up again: the cluster is replaced"

# bad input: refused with a message, nothing created
for args in "up Bad 2" "up $name 0" "up $name 65" "up $name 2 --subnet 10.213" "up $name 2 --rate" "hosts nosuch" \
    "exec $name $name-9 true" "exec $name other-0 true" "frobnicate"; do
    # shellcheck disable=SC2086
    if msg=$("$vc" $args 2>&1); then fail "vcluster $args succeeded"; fi
    echo "$msg" | grep -q "^vcluster: " || fail "vcluster $args: no message ($msg)"
done
echo "PASS bad input: every call refused with a message"

"$vc" down "$name" || fail "down"
"$vc" down "$name" || fail "second down"
[ -z "$(ip netns list | grep "^lmvc-$name-")" ] || fail "namespaces left: $(ip netns list | grep "^lmvc-$name-")"
[ -z "$(ls -d /etc/netns/lmvc-"$name"-* 2>/dev/null)" ] || fail "files left in /etc/netns"
[ "$(root_links)" = "$before" ] || fail "links of the machine's namespace changed: $(diff <(echo "$before") <(root_links))"
echo "PASS down: nothing left behind"

[ $fails = 0 ] || exit 1
