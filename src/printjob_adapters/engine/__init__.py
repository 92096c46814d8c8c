"""The quantise-and-trace engine: raster image in, `VectorArt` out, then a print file."""
