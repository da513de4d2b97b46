#include <mosquitto.h>
#include <mqtt_protocol.h>
