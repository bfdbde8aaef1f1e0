#!/usr/bin/env bash
# tmpfs_huge.csv: the one-pass tmpfs sort of set.sh on a tmpfs mounted with huge pages
# (/dev/shm here has shmem_enabled=never: 4 KiB pages). Run as root.
set -euo pipefail
mkdir -p /mnt/hp && mount -t tmpfs -o size=10G,huge=always tmpfs /mnt/hp
"$(dirname "$0")/set.sh" tmpfs /mnt/hp tmpfs_huge
umount /mnt/hp
