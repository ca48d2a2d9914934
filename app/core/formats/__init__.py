"""Reading formats by content, bounded: detection, sniffing, blobs, streams and archive/header readers."""
