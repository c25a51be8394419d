// libudev for Swift. libudev has no variadic entry points we use, so the header is
// included as is; keep every libudev call of the project behind PodDevice's Discovery.
#ifndef PODBRIDGE_CUDEV_SHIM_H
#define PODBRIDGE_CUDEV_SHIM_H
#include <libudev.h>
#endif
