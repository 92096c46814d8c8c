"""Writers that replay one `VectorArt` as SVG, PDF, EPS or a print PNG."""
