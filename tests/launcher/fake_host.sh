#!/bin/sh
# Stands in for ssh in the launcher's tests across hosts where no virtual
# cluster can be made: `fake_host.sh HOST CMD...` runs CMD here, as the
# launch command would on HOST. A host named unreachable* fails the way ssh
# does when it cannot connect (status 255).
host=$1
shift
case $host in
unreachable*)
    echo "fake_host: $host: connection refused" >&2
    exit 255
    ;;
esac
exec "$@"
