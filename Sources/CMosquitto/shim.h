// libmosquitto (Debian's libmosquitto-dev) for Swift. The client API has no variadic entry
// points, so the header is included as is; every libmosquitto call of the project stays
// behind HubMQTTService's MQTTClient.
#ifndef PODBRIDGE_CMOSQUITTO_SHIM_H
#define PODBRIDGE_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#endif
