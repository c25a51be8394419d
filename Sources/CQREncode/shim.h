// libqrencode (Debian's libqrencode-dev) for Swift: the setup payload's QR code on the
// dashboard. Every call stays behind HomeKitService's SetupQRCode.
#ifndef PODBRIDGE_CQRENCODE_SHIM_H
#define PODBRIDGE_CQRENCODE_SHIM_H
#include <qrencode.h>
#endif
