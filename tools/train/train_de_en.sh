#!/usr/bin/env bash
# The recipe of models/de-en: see train_multi30k.sh.
exec bash "$(dirname "${BASH_SOURCE[0]}")/train_multi30k.sh" de en "$@"
