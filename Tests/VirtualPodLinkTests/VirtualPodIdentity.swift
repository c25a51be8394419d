// PodDevice and VirtualPod both have a `PodIdentity` (the USB identity of a found pod, and
// what the virtual pod says in HELLO); this file imports only the latter to name it.
import VirtualPod

typealias VirtualPodIdentity = PodIdentity
