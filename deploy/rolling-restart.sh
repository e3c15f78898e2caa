#!/bin/sh
# Restart (or upgrade) the compose cluster's nodes one at a time: each drains (its players are
# told; its games go to the other node), its new container starts, and the next waits until
# this one's health check (/health/ready) passes. docs/operations.md, "Restarts and upgrades".
#   deploy/rolling-restart.sh            # after `docker compose -f deploy/compose.yaml build`
set -eu
compose="docker compose -f $(dirname "$0")/compose.yaml"
for node in $($compose config --services | grep '^node-'); do
	$compose up --detach --no-deps --wait --wait-timeout 120 --force-recreate "$node"
done
$compose up --detach --no-deps worker
