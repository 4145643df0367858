# The base of every stand-in: a minimal Debian bookworm (mmdebstrap, docker import) that trusts
# this machine's extra CA certificates, so apt, pip and npm get through its egress proxy.
ARG ROOTFS
FROM ${ROOTFS}
COPY certs/ /usr/local/share/ca-certificates/
RUN update-ca-certificates
ENV LANG=C.UTF-8
CMD ["bash"]
