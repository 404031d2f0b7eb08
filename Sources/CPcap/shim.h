// libpcap, for reading pcap and pcapng files and for live capture (apt: libpcap-dev).
#ifndef H5REPLAY_CPCAP_SHIM_H
#define H5REPLAY_CPCAP_SHIM_H
#include <pcap/pcap.h>
#endif
