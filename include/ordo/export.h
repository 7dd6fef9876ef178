// libordo is built with hidden symbol visibility; ORDO_API marks the public API.
#pragma once

#define ORDO_API __attribute__((visibility("default")))
