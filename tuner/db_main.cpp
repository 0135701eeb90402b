// placeholder until written
int main() { return 1; }
