// libusb-1.0 for Swift. Swift cannot call C variadic functions, so the variadic
// libusb_set_option gets fixed-arity inline wrappers, one per option shape we use.
#ifndef PODBRIDGE_CLIBUSB_SHIM_H
#define PODBRIDGE_CLIBUSB_SHIM_H
#include <libusb-1.0/libusb.h>

/// libusb_set_option for options that take no argument
/// (LIBUSB_OPTION_USE_USBDK, LIBUSB_OPTION_NO_DEVICE_DISCOVERY).
static inline int podbridge_libusb_set_option_flag(libusb_context *ctx, enum libusb_option option) {
    return libusb_set_option(ctx, option);
}

/// libusb_set_option for options that take one int (LIBUSB_OPTION_LOG_LEVEL).
static inline int podbridge_libusb_set_option_int(libusb_context *ctx, enum libusb_option option, int value) {
    return libusb_set_option(ctx, option, value);
}

/// Opening a device node found through udev needs discovery off: a context made
/// this way never scans /dev/bus/usb or /sys itself.
static inline int podbridge_libusb_init_without_discovery(libusb_context **ctx) {
    int rc = libusb_set_option(NULL, LIBUSB_OPTION_NO_DEVICE_DISCOVERY);
    if (rc != LIBUSB_SUCCESS && rc != LIBUSB_ERROR_NOT_SUPPORTED) return rc;
    return libusb_init(ctx);
}
#endif
