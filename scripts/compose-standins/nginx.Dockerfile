# Stands in for the nginx image: Debian's nginx, conf.d/*.conf only (the default site removed,
# so deploy/balancer.conf is the only server on port 80), logs to the container's output.
ARG BASE
FROM ${BASE}
# Debian stable's current package: a stand-in follows the release, it pins no build.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx \
    && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/default \
    && ln -sf /dev/stdout /var/log/nginx/access.log \
    && ln -sf /dev/stderr /var/log/nginx/error.log
EXPOSE 80
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
