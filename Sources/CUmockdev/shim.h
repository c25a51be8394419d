// umockdev's testbed API, used only by the device tests to add and remove mocked pods.
#ifndef PODBRIDGE_CUMOCKDEV_SHIM_H
#define PODBRIDGE_CUMOCKDEV_SHIM_H
#include <umockdev.h>
#endif
