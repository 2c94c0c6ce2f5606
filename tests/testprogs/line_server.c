#include "tests/testprogs/line_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "tests/testprogs/testprog_support.h"

enum { kBacklog = 128, kReplyBytes = 512, kRequestBytes = 256, kClientTimeoutSeconds = 5 };

int LineRead(int fd, char* buf, size_t size) {
  size_t len = 0;
  while (1) {
    char c;
    ssize_t n = read(fd, &c, 1);
    if (n < 0) return -1;  // EINTR included: the caller decides
    if (n == 0) {
      if (len == 0) return 0;
      break;
    }
    if (c == '\n') break;
    if (len + 1 < size) buf[len++] = c;
  }
  buf[len] = '\0';
  return (int)len;
}

int LineWrite(int fd, const char* text) { return TestProgWriteAll(fd, text, strlen(text)); }

int LineServerListen(unsigned short* port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    perror("socket");
    return -1;
  }
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, (struct sockaddr*)&addr, sizeof(addr)) != 0 || listen(fd, kBacklog) != 0 ||
      getsockname(fd, (struct sockaddr*)&addr, &len) != 0) {
    perror("bind/listen 127.0.0.1:0");
    close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

int LineServeOne(int listen_fd, LineHandler handler) {
  int conn = accept(listen_fd, NULL, NULL);
  if (conn < 0) return -1;
  // A client that connects and says nothing must not stall the service.
  struct timeval timeout = {kClientTimeoutSeconds, 0};
  setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  char request[kRequestBytes];
  int n;
  do {
    n = LineRead(conn, request, sizeof(request));
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    char reply[kReplyBytes];
    handler(request, reply, sizeof(reply) - 1);
    strcat(reply, "\n");
    LineWrite(conn, reply);
  }
  close(conn);
  return 0;
}
