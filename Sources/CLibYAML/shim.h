// libyaml's event API, which the manifest's composer drives directly: it needs every event's
// marks, styles, tags and anchors, which no Swift YAML library exposes.
#include <yaml.h>
