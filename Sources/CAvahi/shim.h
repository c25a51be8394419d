// libavahi-client (Debian's libavahi-client-dev) for Swift: the client, its threaded poll and
// entry groups. Every Avahi call of the project stays behind HomeKitService's HomeKitAdvertiser.
#ifndef PODBRIDGE_CAVAHI_SHIM_H
#define PODBRIDGE_CAVAHI_SHIM_H
#include <avahi-client/client.h>
#include <avahi-client/publish.h>
#include <avahi-common/thread-watch.h>
#include <avahi-common/strlst.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#endif
